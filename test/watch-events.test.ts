import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { nodeGapEvents } from '../src/core/alerts/node-gaps.ts';
import { runEstate, startEstate, type RunningEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { sendJson, startFake } from './helpers/fake-upstreams.ts';
import { newKey } from './helpers/server.ts';
import { waitUntil } from './helpers/wait-until.ts';

// provider_down / provider_recovered through the real `estate serve`: it
// probes a real loopback provider that goes down and comes back, stores the
// probes, and /events derives the events from them, the same after a
// restart. And the stale spells of a node (node_stale, node_recovered)
// derived from its trend points, with the clock given.

type Json = { kind: string; source: string; subject: string; ts: string; message: string };

const urlOf = (running: RunningEstate) => /http:\/\/127\.0\.0\.1:\d+/.exec(running.stdout())?.[0];

test('estate serve probes a provider that goes down (502) and comes back: provider_down once, provider_recovered once, and a restart repeats neither', async (t) => {
  let status = 200;
  const provider = await startFake(t, (_req, res) => sendJson(res, status, { models: [] }));
  const dir = await tempDataDir(t);
  await writeFile(
    path.join(dir, 'estate.config.json'),
    JSON.stringify({ providers: [{ name: 'llm', url: `${provider.url}/api/tags`, timeout_ms: 30_000 }], providers_probe_s: 1, alerts: { hold: '0s' } }),
  );
  const key = await newKey(dir);
  const probesFile = path.join(dir, 'providers', 'probes.jsonl');
  const probes = async () =>
    (await readFile(probesFile, 'utf8').catch(() => ''))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { reachable: boolean; error: string | null });
  const serve = async () => {
    const running = startEstate(t, ['serve', '--port', '0', '--data-dir', dir, '--log-format', 'json']);
    await running.waitForStdout('the URL', (out) => /http:\/\/127\.0\.0\.1:\d+/.test(out));
    return running;
  };
  let running = await serve();
  const providerEvents = async () => {
    const res = await fetch(`${urlOf(running)}/events?limit=1000`, { headers: { 'X-API-Key': key } });
    assert.equal(res.status, 200);
    return ((await res.json()) as { items: Json[] }).items.filter((e) => e.source === 'provider');
  };

  await waitUntil('a probe of the provider up', async () => (await probes()).some((p) => p.reachable));
  assert.deepEqual(await providerEvents(), [], 'up from the start: nothing');

  status = 502;
  await waitUntil('provider_down', async () => (await providerEvents()).some((e) => e.kind === 'provider_down'));
  status = 200;
  await waitUntil('provider_recovered', async () => (await providerEvents()).some((e) => e.kind === 'provider_recovered'));
  const events = await providerEvents();
  assert.deepEqual(
    events.map((e) => [e.kind, e.subject, e.message]),
    [
      ['provider_recovered', 'llm', 'llm is reachable again (was: status 502)'],
      ['provider_down', 'llm', 'llm is down: status 502'],
    ],
  );

  const stopped = await running.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
  const before = (await probes()).length;
  running = await serve();
  await waitUntil('a probe after the restart', async () => (await probes()).length > before);
  assert.deepEqual(await providerEvents(), events, 'the same events after a restart: none repeated, none missed');
  assert.equal((await running.stop()).code, 0);
});

const S = 1000;
const T0 = Date.parse('2026-12-01T10:00:00Z');
const spells: { name: string; sent: number[]; lastSeen?: number; now: number; expected: [string, number][] }[] = [
  { name: 'steady: nothing', sent: [0, 60, 120, 180], now: 200, expected: [] },
  { name: 'a gap longer than the threshold: stale at its start plus the threshold, recovered at its end', sent: [0, 60, 1000, 1060], now: 1100, expected: [['node_stale', 960], ['node_recovered', 1000]] },
  { name: 'a gap of exactly the threshold is not one', sent: [0, 900], now: 1000, expected: [] },
  { name: 'silent now: stale, not recovered', sent: [0, 60], now: 2000, expected: [['node_stale', 960]] },
  { name: 'two spells, the second still on', sent: [0, 1000, 3000], now: 5000, expected: [['node_stale', 900], ['node_recovered', 1000], ['node_stale', 1900], ['node_recovered', 3000], ['node_stale', 3900]] },
  { name: 'the heartbeat newer than the trend points keeps it fresh', sent: [0], lastSeen: 1500, now: 2000, expected: [] },
  { name: 'points in any order', sent: [1000, 0], now: 1100, expected: [['node_stale', 900], ['node_recovered', 1000]] },
];

for (const c of spells) {
  test(`nodeGapEvents: ${c.name}`, () => {
    const sent = c.sent.map((s) => T0 + s * S);
    const lastSeen = T0 + (c.lastSeen ?? Math.max(...c.sent)) * S;
    const events = nodeGapEvents('web-1', sent, 900 * S, lastSeen, T0 + c.now * S);
    assert.deepEqual(
      events.map((e) => [e.kind, (Date.parse(e.ts) - T0) / S]),
      c.expected,
    );
    // Every node_recovered follows a node_stale of its own; the node is stale now exactly when the last event is a node_stale.
    events.forEach((e, i) => e.kind === 'node_recovered' && assert.equal(events[i - 1]?.kind, 'node_stale'));
    assert.equal(events.at(-1)?.kind === 'node_stale', c.now * S - (lastSeen - T0) > 900 * S);
  });
}

test("estate events and /summary: a node's gap in its trend points is a node_stale then a node_recovered; a node silent now is stale, and only it", async (t) => {
  const dir = await tempDataDir(t);
  const now = Date.now();
  const at = (minutesAgo: number) => new Date(now - minutesAgo * 60_000).toISOString();
  // web-1 was silent for an hour two hours ago and sends again since; db-1 has been silent for an hour now.
  const points = [
    { ts: at(200), node: 'web-1', cpu_pct: 1 },
    { ts: at(190), node: 'web-1', cpu_pct: 1 },
    { ts: at(130), node: 'web-1', cpu_pct: 1 },
    { ts: at(1), node: 'web-1', cpu_pct: 1 },
    { ts: at(60), node: 'db-1', cpu_pct: 1 },
  ];
  await writeFile(path.join(dir, 'trends.jsonl'), points.map((p) => `${JSON.stringify(p)}\n`).join(''));
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ events: { stale_after_s: 1800 } }));
  const r = await runEstate(['events', '--json', '--limit', '100', '--data-dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  const spells = (r.json.items as Json[]).filter((e) => e.kind === 'node_stale' || e.kind === 'node_recovered');
  assert.deepEqual(
    spells.map((e) => [e.kind, e.subject, e.ts]),
    [
      // Newest first: web-1 sent again a minute ago after 129 min of silence (and once before, after 60); db-1 went stale 30 min ago.
      ['node_recovered', 'web-1', at(1)],
      ['node_stale', 'db-1', at(30)],
      ['node_stale', 'web-1', at(100)],
      ['node_recovered', 'web-1', at(130)],
      ['node_stale', 'web-1', at(160)],
    ],
  );
  assert.ok(spells.every((e) => e.source === 'heartbeat'));
  assert.match(spells[0]?.message ?? '', /^web-1 is sending again after 2h 9m of silence$/);
  assert.match(spells[1]?.message ?? '', /^db-1 has not been seen for 1h 0m$/);

  const summary = await runEstate(['summary', '--json', '--data-dir', dir]);
  assert.equal(summary.code, 0, summary.stderr);
  assert.deepEqual(summary.json.events.stale_nodes, ['db-1'], 'web-1 recovered: not stale');
});
