import assert from 'node:assert/strict';
import { appendFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { deriveEvents, type EventWatch } from '../src/core/events/estate-events.ts';
import { KeptWindows, plainWindows } from '../src/core/series/series-windows.ts';
import { createDataDirStore } from '../src/core/store/data-dir-store.ts';
import type { SeriesSample } from '../src/core/store/store.ts';
import { tempDataDir } from './helpers/data-dir.ts';

// The event recorder's kept windows (src/core/series/series-windows.ts)
// against reading every window whole: over a real data dir that other
// writers append to (lines straight into the logs, and the store's own
// ingest), with gaps, every pulse status, points out of time order,
// duplicate lines and bursts longer than a window, the events derived
// through kept windows are the events derived by reading whole, round
// after round; after a prune, the periodic whole read brings them back in step.

const NODES = ['db-1', 'web-1', 'web-2', 'edge-1'];
const WATCH: EventWatch = { schedules: [], holdMs: 30_000, thisNode: 'hub' };
const STALE_S = 300;

/** A small seeded generator, so a failure can be run again. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1_664_525 + 1_013_904_223) >>> 0;
    return s / 2 ** 32;
  };
}

test('events derived through kept windows equal those derived by reading every window whole, round after round of appends', async (t) => {
  const dir = await tempDataDir(t);
  const store = createDataDirStore(dir);
  t.after(() => store.close());
  const kept = new KeptWindows(store.series, 5);
  const rnd = random(26);
  const base = Date.parse('2026-12-01T00:00:00.000Z');
  const clock = new Map(NODES.map((n) => [n, base]));
  const line = (r: Record<string, unknown>) => `${JSON.stringify(r)}\n`;
  let now = base;

  for (let round = 0; round < 40; round++) {
    let trends = '';
    let pulse = '';
    const samples: SeriesSample[] = [];
    for (const node of NODES) {
      // Most rounds a few samples; now and then none, a silence longer than the threshold, or a burst past a window.
      const count = round % 13 === 7 && node === 'web-1' ? 230 : Math.floor(rnd() * 6);
      for (let i = 0; i < count; i++) {
        const gap = rnd() < 0.08 ? (STALE_S + 60) * 1000 : 10_000;
        const at = (clock.get(node) as number) + gap;
        clock.set(node, at);
        // Now and then a point dated before the last one (a late spool), or a line written twice.
        const ts = new Date(rnd() < 0.05 ? at - 45_000 : at).toISOString();
        const status: SeriesSample['pulse']['status'] = rnd() < 0.15 ? 'degraded' : rnd() < 0.05 ? 'unhealthy' : 'healthy';
        const checks: SeriesSample['pulse']['checks'] = status === 'healthy' ? {} : { 'disk:/': { status, value: 90 + Math.floor(rnd() * 9) } };
        if (rnd() < 0.3) samples.push({ trend: { ts, node, cpu_pct: 5 }, disks: [], pulse: { ts, node, status, checks } });
        else {
          trends += line({ ts, node, cpu_pct: 5 });
          pulse += line({ ts, node, status, checks });
          if (rnd() < 0.03) pulse += line({ ts, node, status, checks });
        }
        now = Math.max(now, at);
      }
    }
    await appendFile(path.join(dir, 'trends.jsonl'), trends);
    await appendFile(path.join(dir, 'health-pulse.jsonl'), pulse);
    if (samples.length) await store.series.ingest(samples);

    const at = new Date(now + 60_000);
    kept.beginPass();
    const whole = await deriveEvents({ dataDir: dir, store }, Number.MAX_SAFE_INTEGER, STALE_S, at, WATCH);
    const windowed = await deriveEvents({ dataDir: dir, store, windows: kept }, Number.MAX_SAFE_INTEGER, STALE_S, at, WATCH);
    assert.deepEqual(windowed.items, whole.items, `round ${round}`);
    assert.ok(whole.items.some((e) => e.kind === 'node_recovered') || round < 5, 'the rounds make gaps');
  }
  const kinds = new Set((await deriveEvents({ dataDir: dir, store }, Number.MAX_SAFE_INTEGER, STALE_S, new Date(now), WATCH)).items.map((e) => e.kind));
  for (const kind of ['node_stale', 'node_recovered', 'pulse_degraded', 'pulse_recovered']) assert.ok(kinds.has(kind as never), `the data derive ${kind}`);

  // A prune removes records of kept windows whose newest is still there: within `fullEvery` passes they are read whole again.
  await store.series.prune('trends', new Date(now - 600_000));
  await store.series.prune('pulse', new Date(now - 600_000));
  const at = new Date(now + 60_000);
  let same = false;
  for (let pass = 0; pass < 5 && !same; pass++) {
    kept.beginPass();
    const whole = await deriveEvents({ dataDir: dir, store }, Number.MAX_SAFE_INTEGER, STALE_S, at, WATCH);
    const windowed = await deriveEvents({ dataDir: dir, store, windows: kept }, Number.MAX_SAFE_INTEGER, STALE_S, at, WATCH);
    same = JSON.stringify(windowed.items) === JSON.stringify(whole.items);
  }
  assert.ok(same, 'in step again within fullEvery passes of a prune');
});

test('a record written again right after a kept window\'s newest one is a new record of the window, not taken for the one kept', async (t) => {
  const dir = await tempDataDir(t);
  const store = createDataDirStore(dir);
  t.after(() => store.close());
  const kept = new KeptWindows(store.series);
  const file = path.join(dir, 'trends.jsonl');
  const point = (i: number) => `${JSON.stringify({ ts: `2026-12-01T00:0${i}:00.000Z`, node: 'n', cpu_pct: i })}\n`;
  const times = async (windows: Pick<KeptWindows, 'window'>) => (await windows.window('trends', 'n', 5, (r) => String(r.ts).slice(14, 16))).items;
  const whole = { window: plainWindows(store.series).window };
  await appendFile(file, [1, 2, 3, 4, 5, 6].map(point).join(''));
  kept.beginPass();
  assert.deepEqual(await times(kept), ['06', '05', '04', '03', '02']);
  // The same line again (another writer's retry), then again and a new one: each pass as the whole read says.
  for (const lines of [point(6), point(6) + point(7), point(7) + point(7) + point(7)]) {
    await appendFile(file, lines);
    kept.beginPass();
    assert.deepEqual(await times(kept), await times(whole), lines);
  }
});
