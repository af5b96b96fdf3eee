import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { type PulseEntry, pulseAlerts, pulseEntryOf } from '../src/core/alerts/pulse-alerts.ts';
import { allPulseAlerts, PULSE_ALERT_WINDOW } from '../src/core/alerts/read-pulse-alerts.ts';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';

// Pulse alerts (DESIGN.md 7c): a condition fires once it has held for
// alerts.hold, its recovery once; derived from the pulse entries, with the
// clock given, then through the real CLI and server on real files.

const T0 = Date.parse('2026-12-01T10:00:00Z');
const entry = (s: number, status: PulseEntry['status'], failing: string[] = []): PulseEntry => ({ ms: T0 + s * 1000, status, failing });
const kinds = (alerts: { kind: string; ts: string }[]) => alerts.map((a) => [a.kind, a.ts.slice(11, 19)]);

test('a status fires once it has held for the hold, and its recovery once; flapping faster than the hold fires nothing', () => {
  const entries = [
    entry(0, 'healthy'),
    entry(10, 'degraded', ['disk:/ at 96']),
    entry(40, 'degraded', ['disk:/ at 97']),
    entry(80, 'degraded', ['disk:/ at 97']),
    // Unhealthy for 30 s only: under the hold, so no event.
    entry(90, 'unhealthy', ['disk:/ at 99']),
    entry(120, 'degraded', ['disk:/ at 97']),
    // Healthy from 200 s on, held: one recovery at 260 s.
    entry(200, 'healthy'),
    entry(230, 'healthy'),
    entry(290, 'healthy'),
  ];
  const alerts = pulseAlerts('web-1', entries, 60_000, T0 + 400_000);
  assert.deepEqual(kinds(alerts), [
    ['pulse_degraded', '10:01:10'],
    ['pulse_recovered', '10:04:20'],
  ]);
  assert.equal(alerts[0]?.message, 'web-1 is degraded for 60 s: disk:/ at 97');
  assert.equal(alerts[1]?.message, 'web-1 is healthy again for 60 s (was: disk:/ at 97)');

  // Flapping every 30 s under a 60 s hold: nothing.
  const flapping = Array.from({ length: 20 }, (_, i) => entry(i * 30, i % 2 ? 'unhealthy' : 'healthy', ['load']));
  assert.deepEqual(pulseAlerts('db-1', flapping, 60_000, T0 + 600_000), []);
  // A condition still on now fires once now is past its hold, not before.
  const ongoing = [entry(0, 'healthy'), entry(100, 'unhealthy', ['memory at 98'])];
  assert.deepEqual(pulseAlerts('n', ongoing, 60_000, T0 + 159_000), []);
  assert.deepEqual(kinds(pulseAlerts('n', ongoing, 60_000, T0 + 160_000)), [['pulse_unhealthy', '10:02:40']]);
  // A hold of 0 fires on the first entry of each change.
  assert.deepEqual(kinds(pulseAlerts('n', flapping.slice(0, 4), 0, T0 + 600_000)), [
    ['pulse_unhealthy', '10:00:30'],
    ['pulse_recovered', '10:01:00'],
    ['pulse_unhealthy', '10:01:30'],
  ]);
  // The same entries give the same alerts.
  assert.deepEqual(pulseAlerts('web-1', entries, 60_000, T0 + 400_000), alerts);
});

test('a pulse entry as the collector writes it: the failing checks named with their values; entries without a time or a known status are none', () => {
  const e = pulseEntryOf({ ts: '2026-12-01T10:00:00Z', status: 'unhealthy', checks: { 'disk:/': { status: 'unhealthy', value: 96.04 }, memory: { status: 'healthy', value: 40 }, load: 'degraded' } });
  assert.deepEqual(e, { ms: T0, status: 'unhealthy', failing: ['disk:/ at 96', 'load'] });
  assert.equal(pulseEntryOf({ ts: 'yesterday', status: 'healthy' }), undefined);
  assert.equal(pulseEntryOf({ ts: '2026-12-01T10:00:00Z', status: 'ok' }), undefined);
});

test('/events and estate events carry the pulse alerts of every node, held for alerts.hold; an entry without a node is this node\'s', async (t) => {
  const dir = await tempDataDir(t);
  const base = Date.now() - 3_600_000;
  const at = (s: number) => new Date(base + s * 1000).toISOString();
  const line = (r: object) => `${JSON.stringify(r)}\n`;
  await writeFile(
    path.join(dir, 'health-pulse.jsonl'),
    [
      { ts: at(0), node: 'web-1', status: 'healthy', checks: {} },
      { ts: at(60), node: 'web-1', status: 'unhealthy', checks: { 'disk:/': { status: 'unhealthy', value: 96 } } },
      { ts: at(120), node: 'web-1', status: 'unhealthy', checks: { 'disk:/': { status: 'unhealthy', value: 96 } } },
      { ts: at(300), node: 'web-1', status: 'healthy', checks: {} },
      { ts: at(0), status: 'healthy', checks: {} },
      { ts: at(600), status: 'degraded', checks: { load: { status: 'degraded', value: 2.5 } } },
    ]
      .map(line)
      .join(''),
  );
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ node_name: 'hub', alerts: { hold: '30s' } }));
  const r = await runEstate(['events', '--json', '--limit', '100', '--data-dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  const pulses = (r.json.items as { ts: string; kind: string; source: string; subject: string; message: string }[]).filter((e) => e.source === 'pulse');
  assert.deepEqual(
    pulses.map((e) => [e.kind, e.subject, e.ts]),
    [
      ['pulse_degraded', 'hub', at(630)],
      ['pulse_recovered', 'web-1', at(330)],
      ['pulse_unhealthy', 'web-1', at(90)],
    ],
  );
  assert.match(pulses[2]?.message as string, /web-1 is unhealthy for 30 s: disk:\/ at 96/);

  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const served = await server.get('/events?limit=100', { 'X-API-Key': key });
  assert.equal(served.status, 200);
  assert.deepEqual(served.json.items.filter((e: { source: string }) => e.source === 'pulse'), pulses);

  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ alerts: { hold: 'soon' } }));
  const bad = await runEstate(['events', '--data-dir', dir]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /alerts\.hold: a whole number and a unit/);
});

test('a node whose newest PULSE_ALERT_WINDOW entries are all of one old condition fires nothing again as the window slides; a window holding every entry fires it', async () => {
  const records = (n: number) => Array.from({ length: n }, (_, i) => ({ ts: new Date(T0 + i * 30_000).toISOString(), node: 'web-1', status: 'degraded', checks: { load: 'degraded' } }));
  const seriesOf = (all: Record<string, unknown>[]) => ({
    nodes: async () => ['web-1'],
    newest: async (_series: string, limit: number, where?: { node?: string }) => {
      const items = (where?.node ? all : []).slice(-limit).reverse();
      return { items, count: items.length, limit, skipped_lines: 0 };
    },
  });
  const now = new Date(T0 + 400 * 30_000);
  // 300 entries: the window (200) starts within the spell, which fired before it began.
  assert.deepEqual(await allPulseAlerts(seriesOf(records(300)), 60_000, 'hub', now), []);
  assert.deepEqual(await allPulseAlerts(seriesOf(records(301)), 60_000, 'hub', now), [], 'nor one entry later');
  // 10 entries: the window holds them all, and the spell fires once, at its start plus the hold.
  assert.deepEqual(
    (await allPulseAlerts(seriesOf(records(10)), 60_000, 'hub', now)).map((a) => [a.kind, a.ts]),
    [['pulse_degraded', new Date(T0 + 60_000).toISOString()]],
  );
  assert.equal(PULSE_ALERT_WINDOW, 200);
});

test('a spell longer than the window of entries read keeps its events: one more entry does not move a pulse alert (the webhooks would send it again)', async (t) => {
  const { allPulseAlerts, PULSE_ALERT_WINDOW } = await import('../src/core/alerts/read-pulse-alerts.ts');
  const { createDataDirStore } = await import('../src/core/store/data-dir-store.ts');
  const { appendFile } = await import('node:fs/promises');
  const dir = await tempDataDir(t);
  const store = createDataDirStore(dir);
  t.after(() => store.close());
  const line = (s: number, status: string) => `${JSON.stringify({ ts: new Date(T0 + s * 1000).toISOString(), node: 'web-1', status, checks: { load: { status, value: 9 } } })}\n`;
  // Healthy, then degraded for longer than the window holds.
  let text = line(0, 'healthy');
  for (let i = 1; i <= PULSE_ALERT_WINDOW + 10; i++) text += line(i, 'degraded');
  await appendFile(path.join(dir, 'health-pulse.jsonl'), text);
  const read = async (nowS: number) => (await allPulseAlerts(store.series, 0, 'this-node', new Date(T0 + nowS * 1000))).map((a) => `${a.kind}@${a.ts}`);
  const before = await read(PULSE_ALERT_WINDOW + 20);
  await appendFile(path.join(dir, 'health-pulse.jsonl'), line(PULSE_ALERT_WINDOW + 11, 'degraded'));
  assert.deepEqual(await read(PULSE_ALERT_WINDOW + 20), before, 'the same events, with the same times');
  // A change inside the window still fires, once.
  await appendFile(path.join(dir, 'health-pulse.jsonl'), line(PULSE_ALERT_WINDOW + 12, 'healthy'));
  assert.deepEqual(await read(PULSE_ALERT_WINDOW + 20), [...before, `pulse_recovered@${new Date(T0 + (PULSE_ALERT_WINDOW + 12) * 1000).toISOString()}`]);
});

test('a hold longer than the window of 200 entries still fires, once, at the spell start plus the hold: the window grows to span it (also in estate events)', async (t) => {
  const { createDataDirStore } = await import('../src/core/store/data-dir-store.ts');
  const dir = await tempDataDir(t);
  const store = createDataDirStore(dir);
  t.after(() => store.close());
  // One entry a minute, as the collector writes them: healthy for 100 min, then degraded for 300 min (and still).
  const start = Date.now() - 400 * 60_000;
  const at = (i: number) => new Date(start + i * 60_000).toISOString();
  let text = '';
  for (let i = 0; i <= 400; i++) {
    const status = i < 100 ? 'healthy' : 'degraded';
    text += `${JSON.stringify({ ts: at(i), node: 'web-1', status, checks: { load: { status, value: i } } })}\n`;
  }
  await writeFile(path.join(dir, 'health-pulse.jsonl'), text);
  const hold = 4 * 3600_000;
  const read = async () => (await allPulseAlerts(store.series, hold, 'this-node', new Date(start + 400 * 60_000 + 1000))).map((a) => `${a.kind}@${a.ts}`);
  assert.deepEqual(await read(), [`pulse_degraded@${at(100 + 240)}`]);

  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ alerts: { hold: '4h' } }));
  const cli = await runEstate(['events', '--data-dir', dir, '--json']);
  assert.equal(cli.code, 0, cli.stderr);
  const pulses = (cli.json as { items: { kind: string; ts: string; source: string }[] }).items.filter((e) => e.source === 'pulse');
  assert.deepEqual(pulses.map((e) => `${e.kind}@${e.ts}`), [`pulse_degraded@${at(340)}`]);
});
