import assert from 'node:assert/strict';
import { appendFile, cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate, startEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { waitUntil } from './helpers/wait-until.ts';

// The watched events are stored when they happen (DESIGN.md section 3):
// the real `estate serve` records them in events/watched.jsonl as it notices
// them, once, and /events (here `estate events`, the same operation) keeps
// answering them after the inputs they were derived from have left the
// windows they are derived from, or were pruned, and after a restart.

type Event = { ts: string; kind: string; subject: string; message: string };

function pulseLine(status: 'healthy' | 'degraded', ts: Date): string {
  const checks = status === 'healthy' ? { 'disk:/': { status: 'healthy', value: 40 } } : { 'disk:/': { status: 'degraded', value: 91.2 } };
  return `${JSON.stringify({ ts: ts.toISOString(), node: 'web-1', status, checks })}\n`;
}

async function events(dir: string): Promise<Event[]> {
  const r = await runEstate(['events', '--limit', '1000', '--json', '--data-dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.json.errors, []);
  return r.json.items;
}

const watched = (list: Event[]) => list.filter((e) => e.kind.startsWith('pulse_')).map((e) => `${e.kind} ${e.ts}`);

async function storedLines(dir: string): Promise<Record<string, unknown>[]> {
  const text = await readFile(path.join(dir, 'events', 'watched.jsonl'), 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

function serve(t: Parameters<typeof tempDataDir>[0], dir: string) {
  return startEstate(t, ['serve', '--port', '0', '--quiet', '--log-format', 'json', '--data-dir', dir]);
}

test('estate serve stores the watched events as it notices them; /events keeps them once their inputs have left the window and were pruned, and a restart stores none twice', async (t) => {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ alerts: { hold: '0s' }, events: { watch_every: '1s' } }));
  const start = Date.now() - 600_000;
  const at = (s: number) => new Date(start + s * 1000);
  await appendFile(path.join(dir, 'health-pulse.jsonl'), pulseLine('healthy', at(0)) + pulseLine('degraded', at(10)) + pulseLine('healthy', at(20)));
  const expected: string[] = [`pulse_recovered ${at(20).toISOString()}`, `pulse_degraded ${at(10).toISOString()}`];

  const first = serve(t, dir);
  await waitUntil('both events stored', async () => (await storedLines(dir)).length === 2);
  const stored = await storedLines(dir);
  assert.deepEqual(stored.map((r) => `${r.kind} ${r.ts}`).sort(), [...expected].sort());
  for (const r of stored) {
    assert.match(String(r.id), /^ev_[0-9a-f]{16}$/);
    assert.equal(r.occurrence, `web-1@${r.ts}`);
    assert.ok(Date.parse(String(r.recorded_at)) > Date.parse(String(r.ts)));
  }
  assert.equal((await first.stop()).code, 0);

  // A restart derives those two again and stores neither twice; a new one, once.
  const second = serve(t, dir);
  await appendFile(path.join(dir, 'health-pulse.jsonl'), pulseLine('degraded', at(25)));
  await waitUntil('the new event stored', async () => (await storedLines(dir)).length >= 3);
  const stopped = await second.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
  const after = await storedLines(dir);
  assert.equal(after.length, 3, JSON.stringify(after));
  assert.deepEqual(after.slice(0, 2), stored);
  assert.equal(`${after[2]?.kind} ${after[2]?.ts}`, `pulse_degraded ${at(25).toISOString()}`);
  assert.deepEqual([...stopped.stderr.matchAll(/"event":"events_recorded","count":(\d+)/g)].map((m) => m[1]), ['1']);
  expected.unshift(`pulse_degraded ${at(25).toISOString()}`);

  // 250 healthy entries later, the newest 200 the pulse events are derived from are all healthy: derived alone, no event is left.
  await appendFile(path.join(dir, 'health-pulse.jsonl'), Array.from({ length: 250 }, (_, i) => pulseLine('healthy', at(30 + i))).join(''));
  const derivedOnly = await tempDataDir(t);
  await cp(dir, derivedOnly, { recursive: true });
  await rm(path.join(derivedOnly, 'events'), { recursive: true });
  assert.deepEqual(watched(await events(derivedOnly)), [], 'derived alone, the events are gone');
  // Stored, /events still has them, as first noticed.
  const kept = await events(dir);
  assert.deepEqual(watched(kept), expected);
  assert.equal(kept.find((e) => e.kind === 'pulse_degraded')?.message, after[2]?.message);

  // Pruned: the pulse log holds none of it now.
  const pruned = await runEstate(['prune', '--older-than', '1m', '--log', 'pulse', '--data-dir', dir]);
  assert.equal(pruned.code, 0, pruned.stderr);
  assert.equal((await readFile(path.join(dir, 'health-pulse.jsonl'), 'utf8')).trim(), '');
  assert.deepEqual(watched(await events(dir)), expected);
});

test('a stale node noticed by estate serve stays in /events after its trend points are pruned', async (t) => {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ events: { stale_after_s: 60, watch_every: '1s' } }));
  const seen = new Date(Date.now() - 120_000);
  await appendFile(path.join(dir, 'trends.jsonl'), `${JSON.stringify({ ts: seen.toISOString(), node: 'db-1', cpu_pct: 5 })}\n`);
  const server = serve(t, dir);
  await waitUntil('the stale node stored', async () => (await storedLines(dir)).some((r) => r.kind === 'node_stale'));
  assert.equal((await server.stop()).code, 0);
  const staleAt = new Date(seen.getTime() + 60_000).toISOString();

  // The node's trend points pruned (as collect.retention would): nothing is left to derive the spell from.
  assert.equal((await runEstate(['prune', '--older-than', '1m', '--log', 'trends', '--data-dir', dir])).code, 0);
  const list = await events(dir);
  const stale = list.filter((e) => e.kind === 'node_stale');
  assert.deepEqual(stale.map((e) => [e.subject, e.ts]), [['db-1', staleAt]]);
  assert.match(stale[0]?.message ?? '', /^db-1 has not been seen for /);
});

test('estate serve keeps the stored events for events.retention: older ones are removed, and never stored again while their inputs still derive them', async (t) => {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ alerts: { hold: '0s' }, events: { watch_every: '1s', retention: '1h' } }));
  const ago = (minutes: number) => new Date(Date.now() - minutes * 60_000);
  // Stored by an earlier server three hours ago.
  const old = { id: 'ev_00000000000000aa', kind: 'pulse_degraded', source: 'pulse', subject: 'web-1', ts: ago(180).toISOString(), message: 'web-1 is degraded', occurrence: `web-1@${ago(180).toISOString()}`, recorded_at: ago(180).toISOString() };
  await mkdir(path.join(dir, 'events'), { recursive: true });
  await writeFile(path.join(dir, 'events', 'watched.jsonl'), `${JSON.stringify(old)}\n`);
  // The pulse derives a degraded spell two hours ago (past the retention) and one ten minutes ago.
  await appendFile(path.join(dir, 'health-pulse.jsonl'), pulseLine('degraded', ago(120)) + pulseLine('healthy', ago(119)) + pulseLine('degraded', ago(10)));

  const server = serve(t, dir);
  const recent = (r: Record<string, unknown>) => Date.parse(String(r.ts)) > Date.now() - 3_600_000;
  await waitUntil('the recent event stored', async () => (await storedLines(dir)).some(recent));
  const stopped = await server.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
  const stored = await storedLines(dir);
  assert.equal(stored.length, 1, JSON.stringify(stored));
  assert.equal(stored[0]?.kind, 'pulse_degraded');
  assert.ok(stored[0] && recent(stored[0]), 'only the event within the retention');
});

test('events.watch_every and events.retention: bad values are exit 2 with one line naming the key; the defaults are 10s (or notify_scan) and 90d', async (t) => {
  const dir = await tempDataDir(t);
  for (const [events, problem] of [
    [{ watch_every: '500ms' }, /events\.watch_every: .*from 1s to 10m/],
    [{ watch_every: '1h' }, /events\.watch_every: .*from 1s to 10m/],
    [{ retention: '30m' }, /events\.retention: .*at least 1h/],
    [{ retention: 'soon' }, /events\.retention: /],
  ] as const) {
    await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ events }));
    const r = await runEstate(['events', '--data-dir', dir]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, problem);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
  const { parseConfig } = await import('../src/config.ts');
  const defaults = parseConfig('{}', 'estate.config.json');
  assert.deepEqual([defaults.events.watch_every, defaults.events.retention, defaults.notify_scan], [undefined, '90d', '10s']);
});
