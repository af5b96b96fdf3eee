import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig, type ProviderConfig } from '../src/config.ts';
import type { Observation } from '../src/core/alerts/held-conditions.ts';
import { providerAlerts, type ProviderState } from '../src/core/alerts/provider-alerts.ts';
import { allProviderAlerts, PROVIDER_ALERT_WINDOW } from '../src/core/alerts/read-provider-alerts.ts';
import { probeProviders } from '../src/core/probes/probe-providers.ts';
import type { ProviderProbe } from '../src/core/probes/provider-probe.ts';
import { createDataDirStore } from '../src/core/store/data-dir-store.ts';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { startPostgres } from './helpers/postgres.ts';
import { refusedUrl, startAnswering, startHanging } from './helpers/fake-upstreams.ts';
import { storesUnderTest } from './helpers/stores.ts';

// Provider alerts (DESIGN.md 7c): provider_down once a provider has been
// unreachable for alerts.hold, provider_recovered once; derived from the
// stored probes, with the clock given; the probes made against real
// loopback upstreams and stored in every store.

const T0 = Date.parse('2026-12-01T10:00:00Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
const obs = (s: number, state: ProviderState, error = 'timeout'): Observation<ProviderState> => ({ ms: T0 + s * 1000, state, detail: state === 'down' ? [error] : [] });
const kinds = (alerts: { kind: string; ts: string }[]) => alerts.map((a) => [a.kind, a.ts.slice(11, 19)]);
const probe = (s: number, provider: string, reachable: boolean, error: string | null = null): ProviderProbe => ({
  ts: at(s),
  provider,
  reachable,
  status: reachable ? 200 : null,
  latency_ms: reachable ? 3 : null,
  error,
});

const cases: { name: string; observations: Observation<ProviderState>[]; holdMs: number; nowS: number; expected: string[][] }[] = [
  {
    name: 'down held for the hold fires once, naming the error by then; its recovery once',
    observations: [obs(0, 'up'), obs(30, 'down', 'connection refused'), obs(60, 'down', 'status 502'), obs(90, 'down', 'status 502'), obs(120, 'up'), obs(150, 'up'), obs(210, 'up')],
    holdMs: 60_000,
    nowS: 400,
    expected: [
      ['provider_down', '10:01:30'],
      ['provider_recovered', '10:03:00'],
    ],
  },
  {
    name: 'flapping faster than the hold fires nothing',
    observations: Array.from({ length: 20 }, (_, i) => obs(i * 30, i % 2 ? 'down' : 'up')),
    holdMs: 60_000,
    nowS: 600,
    expected: [],
  },
  {
    name: 'a down spell still on fires once now is past its hold, not before',
    observations: [obs(0, 'up'), obs(100, 'down')],
    holdMs: 60_000,
    nowS: 159,
    expected: [],
  },
  {
    name: 'a down spell still on, past its hold',
    observations: [obs(0, 'up'), obs(100, 'down')],
    holdMs: 60_000,
    nowS: 160,
    expected: [['provider_down', '10:02:40']],
  },
  {
    name: 'a hold of 0 fires on the first probe of each change',
    observations: [obs(0, 'down'), obs(30, 'up'), obs(60, 'down')],
    holdMs: 0,
    nowS: 90,
    expected: [
      ['provider_down', '10:00:00'],
      ['provider_recovered', '10:00:30'],
      ['provider_down', '10:01:00'],
    ],
  },
  {
    name: 'up from the start fires nothing (recovery only after a down)',
    observations: [obs(0, 'up'), obs(30, 'up')],
    holdMs: 0,
    nowS: 90,
    expected: [],
  },
];

for (const c of cases) {
  test(`providerAlerts: ${c.name}`, () => {
    const alerts = providerAlerts('ollama', c.observations, c.holdMs, T0 + c.nowS * 1000);
    assert.deepEqual(kinds(alerts), c.expected);
    assert.deepEqual(providerAlerts('ollama', c.observations, c.holdMs, T0 + c.nowS * 1000), alerts, 'the same probes, the same alerts');
  });
}

test('the messages name the error, and the recovery what it was', () => {
  const alerts = providerAlerts('ollama', cases[0]?.observations ?? [], 60_000, T0 + 400_000);
  assert.deepEqual(
    alerts.map((a) => a.message),
    ['ollama is down for 60 s: status 502', 'ollama is reachable again for 60 s (was: status 502)'],
  );
});

test('probeProviders against real upstreams: each probe names its error (status 502, connection refused, timeout), a good one none', async (t) => {
  const [good, bad, hanging, refused] = await Promise.all([startAnswering(t, 200), startAnswering(t, 502), startHanging(t), refusedUrl()]);
  const providers: ProviderConfig[] = [
    { name: 'good', url: good.url, timeout_ms: 30_000 },
    { name: 'bad', url: bad.url, timeout_ms: 30_000 },
    { name: 'expects-204', url: good.url, timeout_ms: 30_000, expect_status: 204 },
    { name: 'refused', url: refused, timeout_ms: 30_000 },
    // Never answers: it must time out, whatever the machine's speed.
    { name: 'hanging', url: hanging.url, timeout_ms: 200 },
  ] as ProviderConfig[];
  const stored: ProviderProbe[] = [];
  const probes = await probeProviders(providers, { append: async (p) => void stored.push(...p) }, () => new Date(T0));
  assert.deepEqual(stored, probes, 'every probe is stored');
  assert.deepEqual(
    probes.map((p) => [p.provider, p.reachable, p.status, p.error]),
    [
      ['good', true, 200, null],
      ['bad', false, 502, 'status 502'],
      ['expects-204', false, 200, 'status 200, expected 204'],
      ['refused', false, null, 'connection refused'],
      ['hanging', false, null, 'timeout'],
    ],
  );
  assert.ok(probes.every((p) => p.ts === at(0)));
});

for (const kind of storesUnderTest()) {
  test(`${kind.name}: probes are stored once by (provider, ts), read per provider, newest first, and pruned; another store over the same data (a restart, a replica) derives the same alerts`, async (t) => {
    const opened = await kind.open(t);
    if (!opened) return t.skip(`${kind.name} is not available here`);
    const { store } = opened;
    await store.probes.append([probe(0, 'a', true), probe(0, 'b', true), probe(30, 'a', false, 'connection refused'), probe(60, 'a', false, 'status 502')]);
    // The same probes again (a round stored twice) change nothing.
    await store.probes.append([probe(30, 'a', false, 'connection refused'), probe(90, 'a', false, 'status 502'), probe(90, 'b', true)]);
    assert.deepEqual(
      (await store.probes.newest('a', 10)).map((r) => [r.ts, r.reachable, r.error]),
      [
        [at(90), false, 'status 502'],
        [at(60), false, 'status 502'],
        [at(30), false, 'connection refused'],
        [at(0), true, null],
      ],
    );
    assert.deepEqual((await store.probes.newest('b', 1)).map((r) => r.ts), [at(90)]);
    assert.deepEqual(await store.probes.newest('nobody', 10), []);

    const now = new Date(T0 + 120_000);
    const alerts = await allProviderAlerts(store.probes, ['a', 'b'], 60_000, now);
    assert.deepEqual(
      alerts.map((a) => [a.kind, a.subject, a.ts, a.message]),
      [['provider_down', 'a', at(90), 'a is down for 60 s: status 502']],
    );
    const restarted = await opened.another();
    assert.deepEqual(await allProviderAlerts(restarted.probes, ['a', 'b'], 60_000, now), alerts, 'a restart neither repeats nor misses one');

    // Copy's side: pages oldest first, a restore counts what was there.
    const pages = [];
    for await (const page of store.probes.pages(2)) pages.push(...page.records);
    assert.equal(pages.length, 6);
    assert.deepEqual(await restarted.probes.restore(pages), { created: 0, present: 6 });

    // Retention: the probes dated before the cutoff go, the rest stay readable per provider, and appends go on.
    assert.equal(await store.probes.prune(new Date(T0 + 45_000)), 3);
    assert.deepEqual((await store.probes.newest('a', 10)).map((r) => r.ts), [at(90), at(60)]);
    await store.probes.append([probe(120, 'a', true)]);
    assert.deepEqual((await restarted.probes.newest('a', 10)).map((r) => r.ts), [at(120), at(90), at(60)]);
    assert.deepEqual((await store.probes.newest('b', 10)).map((r) => r.ts), [at(90)]);
  });
}

test('a window full of one down spell older than the window fires nothing as it slides (the event would move with it)', async () => {
  const records = Array.from({ length: PROVIDER_ALERT_WINDOW + 50 }, (_, i) => probe(i * 30, 'p', false, 'timeout'));
  const newest = async (_: string, limit: number) => records.slice(-limit).reverse() as unknown as Record<string, unknown>[];
  const now = new Date(T0 + records.length * 30_000);
  assert.deepEqual(await allProviderAlerts({ newest }, ['p'], 60_000, now), []);
  // The window holds every probe there is: the spell fires, at its start plus the hold.
  const few = records.slice(0, 10);
  const all = async (_: string, limit: number) => few.slice(-limit).reverse() as unknown as Record<string, unknown>[];
  assert.deepEqual(
    (await allProviderAlerts({ newest: all }, ['p'], 60_000, now)).map((a) => [a.kind, a.ts]),
    [['provider_down', at(60)]],
  );
});

test('estate store copy carries the provider probes from a data dir to PostgreSQL and on to a new data dir, each once; the events derived are the same', { timeout: 120_000 }, async (t) => {
  const pg = await startPostgres(t);
  if (!pg) return t.skip('PostgreSQL is not installed (apt-get install postgresql)');
  const [source, target] = await Promise.all([tempDataDir(t), tempDataDir(t)]);
  const migrated = await runEstate(['migrate', '--store', pg.url, '--data-dir', source]);
  assert.equal(migrated.code, 0, migrated.stderr);
  const config = parseConfig('{}', 'estate.config.json');
  const store = createDataDirStore(source, config);
  t.after(() => store.close());
  await store.probes.append([probe(0, 'a', true), probe(30, 'a', false, 'timeout'), probe(90, 'a', false, 'timeout'), probe(120, 'a', true), probe(0, 'b', true)]);

  const toPg = await runEstate(['store', 'copy', '--from', source, '--to', pg.url, '--json']);
  assert.equal(toPg.code, 0, toPg.stderr);
  assert.deepEqual(toPg.json.provider_probes, { copied: 5, already_there: 0, updated: 0, conflicts: 0, skipped: 0 });
  const again = await runEstate(['store', 'copy', '--from', source, '--to', pg.url, '--json']);
  assert.deepEqual([again.json.provider_probes.copied, again.json.provider_probes.already_there], [0, 5]);
  const back = await runEstate(['store', 'copy', '--from', pg.url, '--to', target, '--json']);
  assert.equal(back.code, 0, back.stderr);
  assert.equal(back.json.provider_probes.copied, 5);

  const copy = createDataDirStore(target, config);
  t.after(() => copy.close());
  const now = new Date(T0 + 300_000);
  const events = await allProviderAlerts(store.probes, ['a', 'b'], 30_000, now);
  assert.deepEqual(events.map((e) => e.kind), ['provider_down', 'provider_recovered']);
  assert.deepEqual(await allProviderAlerts(copy.probes, ['a', 'b'], 30_000, now), events);
  assert.deepEqual(await copy.probes.newest('a', 10), await store.probes.newest('a', 10));
});

test('a hold longer than the window of 200 probes still fires, once: the window grows to span twice the hold', async (t) => {
  const store = createDataDirStore(await tempDataDir(t));
  t.after(() => store.close());
  // A probe a minute: up for 100 min, then down for 300 min (and still).
  await store.probes.append(Array.from({ length: 401 }, (_, i) => probe(i * 60, 'p', i < 100, i < 100 ? null : 'timeout')));
  const now = new Date(T0 + 400 * 60_000 + 1000);
  const alerts = async () => (await allProviderAlerts(store.probes, ['p'], 4 * 3600_000, now)).map((a) => [a.kind, a.ts]);
  assert.deepEqual(await alerts(), [['provider_down', at((100 + 240) * 60)]]);
  // One probe more: the event stays where it was.
  await store.probes.append([probe(401 * 60, 'p', false, 'timeout')]);
  assert.deepEqual(await alerts(), [['provider_down', at((100 + 240) * 60)]]);
});
