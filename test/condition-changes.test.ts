import assert from 'node:assert/strict';
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { withoutRepeats } from '../src/core/events/condition-changes.ts';
import { startEventRecorder } from '../src/core/events/event-recorder.ts';
import { estateEvents, type EstateEvent } from '../src/core/events/estate-events.ts';
import { createDataDirStore } from '../src/core/store/data-dir-store.ts';
import type { SeriesSample } from '../src/core/store/store.ts';
import { tempDataDir } from './helpers/data-dir.ts';

// A condition's changes alternate (DESIGN.md 7c), and the stored ones are
// its state: the event recorder stores no change that repeats the last one,
// and stores a node's recovery when the derivation cannot see it; /events
// leaves out a derived change that repeats a stored one. Over a real data
// dir, with the recorder's passes run one at a time.

const STALE_S = 300;
const ev = (kind: EstateEvent['kind'], ts: string, subject = 'n'): EstateEvent => ({ ts, kind, source: kind.startsWith('pulse') ? 'pulse' : 'heartbeat', subject, message: kind });

test('withoutRepeats: a derived change that repeats the kind before it goes, a stored one stays, other events pass', () => {
  const told = withoutRepeats([
    { event: ev('node_stale', '2026-01-01T10:15:00.000Z'), stored: true },
    { event: ev('node_stale', '2026-01-01T10:17:00.000Z'), stored: false },
    { event: ev('node_recovered', '2026-01-01T11:00:00.000Z'), stored: false },
    { event: ev('node_stale', '2026-01-01T10:14:00.000Z', 'm'), stored: false },
    { event: ev('node_stale', '2026-01-01T10:16:00.000Z', 'm'), stored: true },
    { event: ev('pulse_degraded', '2026-01-01T10:15:00.000Z'), stored: false },
    { event: ev('heartbeat', '2026-01-01T10:00:00.000Z'), stored: false },
  ]);
  assert.deepEqual(told.map((t) => `${t.event.subject} ${t.event.kind} ${t.event.ts.slice(11, 16)} ${t.stored ? 'stored' : 'derived'}`).sort(), [
    'm node_stale 10:16 stored',
    'n heartbeat 10:00 derived',
    'n node_recovered 11:00 derived',
    'n node_stale 10:15 stored',
    'n pulse_degraded 10:15 derived',
  ]);
});

async function recorderOn(t: TestContext, dir: string, holdMs = 0) {
  const store = createDataDirStore(dir);
  t.after(() => store.close());
  const recorder = startEventRecorder(
    { dataDir: dir, store, staleAfterS: STALE_S, keepMs: 90 * 86_400_000, watch: { schedules: [], holdMs, thisNode: 'hub' }, everyMs: 600_000, now: () => new Date() },
    { recorded: () => {}, failed: (what, err) => assert.fail(`${what}: ${String(err)}`) },
  );
  t.after(() => recorder.stop());
  const storedOf = async (subject: string) =>
    (await store.events.newest(100, { facet: 'subject', value: subject })).records.map((r) => `${String(r.kind)} ${String(r.ts)}`).reverse();
  const listed = async (subject: string) =>
    (await estateEvents({ dataDir: dir, store }, 1000, STALE_S, new Date(), { schedules: [], holdMs, thisNode: 'hub' })).items
      .filter((e) => e.subject === subject && e.kind !== 'heartbeat')
      .map((e) => `${e.kind} ${e.ts}`)
      .reverse();
  return { store, recorder, storedOf, listed };
}

const iso = (ms: number) => new Date(ms).toISOString();
const heartbeat = (dir: string, nodes: { name: string; last_seen: string }[]) => writeFile(path.join(dir, 'state', 'heartbeat.json'), JSON.stringify({ nodes }));

test('a node known by its heartbeat alone: its silence is stored stale, and its return stored as node_recovered at the beat that ended it', async (t) => {
  const dir = await tempDataDir(t);
  await mkdir(path.join(dir, 'state'), { recursive: true });
  const now = Date.now();
  await heartbeat(dir, [{ name: 'a', last_seen: iso(now - 1_200_000) }]);
  const { recorder, storedOf, listed } = await recorderOn(t, dir);
  await recorder.pass();
  assert.deepEqual(await storedOf('a'), [`node_stale ${iso(now - 900_000)}`]);
  const back = Date.now();
  await heartbeat(dir, [{ name: 'a', last_seen: iso(back) }]);
  await recorder.pass();
  await recorder.pass();
  assert.deepEqual(await storedOf('a'), [`node_stale ${iso(now - 900_000)}`, `node_recovered ${iso(back)}`]);
  assert.deepEqual(await listed('a'), [`node_stale ${iso(now - 900_000)}`, `node_recovered ${iso(back)}`]);
});

test('a heartbeat newer than the trend points: one silence is one node_stale, stored and derived alike, then its node_recovered', async (t) => {
  const dir = await tempDataDir(t);
  await mkdir(path.join(dir, 'state'), { recursive: true });
  const now = Date.now();
  await appendFile(path.join(dir, 'trends.jsonl'), `${JSON.stringify({ ts: iso(now - 1_800_000), node: 'b', cpu_pct: 1 })}\n`);
  await heartbeat(dir, [{ name: 'b', last_seen: iso(now - 1_200_000) }]);
  const { recorder, storedOf, listed } = await recorderOn(t, dir);
  await recorder.pass();
  const stale = `node_stale ${iso(now - 1_800_000 + STALE_S * 1000)}`;
  assert.deepEqual(await storedOf('b'), [stale]);
  const back = Date.now();
  await appendFile(path.join(dir, 'trends.jsonl'), `${JSON.stringify({ ts: iso(back), node: 'b', cpu_pct: 1 })}\n`);
  await heartbeat(dir, [{ name: 'b', last_seen: iso(back) }]);
  await recorder.pass();
  assert.deepEqual(await storedOf('b'), [stale, `node_recovered ${iso(back)}`]);
  assert.deepEqual(await listed('b'), [stale, `node_recovered ${iso(back)}`]);
});

test('a spool replayed in batches after a silence: one node_stale, no new one per batch, and a node_recovered once it is caught up', async (t) => {
  const dir = await tempDataDir(t);
  const { store, recorder, storedOf, listed } = await recorderOn(t, dir);
  const start = Date.now() - 3_600_000;
  const sample = (ms: number): SeriesSample => ({ trend: { ts: iso(ms), node: 'c', cpu_pct: 1 } as SeriesSample['trend'], disks: [], pulse: { ts: iso(ms), node: 'c', status: 'healthy', checks: {} } });
  await store.series.ingest([sample(start)]);
  await recorder.pass();
  const stale = `node_stale ${iso(start + STALE_S * 1000)}`;
  assert.deepEqual(await storedOf('c'), [stale]);
  // The spool comes in three batches, a sample every 60 s with no gap among them: the node is still behind after the first two.
  const times = Array.from({ length: 60 }, (_, i) => start + (i + 1) * 60_000);
  for (const batch of [times.slice(0, 20), times.slice(20, 40), times.slice(40)]) {
    await store.series.ingest(batch.map(sample));
    await recorder.pass();
  }
  const caughtUp = iso(times.at(-1) as number);
  assert.deepEqual(await storedOf('c'), [stale, `node_recovered ${caughtUp}`]);
  assert.deepEqual(await listed('c'), [stale, `node_recovered ${caughtUp}`]);
});

test('a pulse window that lost its condition\'s start to a prune fires nothing again: the stored change stays the only one', async (t) => {
  const dir = await tempDataDir(t);
  const now = Date.now();
  const at = (i: number) => iso(now - (150 - i) * 10_000);
  const lines = Array.from({ length: 150 }, (_, i) => JSON.stringify({ ts: at(i), node: 'd', status: i < 10 ? 'healthy' : 'degraded', checks: i < 10 ? {} : { 'disk:/': { status: 'degraded', value: 91 } } }));
  await writeFile(path.join(dir, 'health-pulse.jsonl'), `${lines.join('\n')}\n`);
  const { store, recorder, storedOf, listed } = await recorderOn(t, dir);
  await recorder.pass();
  const degraded = `pulse_degraded ${at(10)}`;
  assert.deepEqual(await storedOf('d'), [degraded]);
  // Retention keeps the newest 100 entries, all degraded: derived alone, the condition fires again at the first of them.
  await store.series.prune('pulse', new Date(Date.parse(at(50))));
  await recorder.pass();
  assert.deepEqual(await storedOf('d'), [degraded]);
  assert.deepEqual(await listed('d'), [degraded]);
});
