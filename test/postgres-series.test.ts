import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../src/config.ts';
import { openStore } from '../src/core/store/open-store.ts';
import { migrate } from '../src/core/store/postgres/migrate.ts';
import { MIGRATIONS, SCHEMA_VERSION } from '../src/core/store/postgres/migrations.ts';
import { newestQuery } from '../src/core/store/postgres/postgres-series.ts';
import type { SeriesSample } from '../src/core/store/store.ts';
import { VERSION } from '../src/version.ts';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { migratedPostgres, openPostgres, postgresOrSkip, sqlOf, versionsAfter } from './helpers/postgres-store.ts';
import { createKeyWithCli, replicaPostgres, startReplicas } from './helpers/replicas.ts';

// The series in a real PostgreSQL (postgres/postgres-series.ts): per-node
// reads through their index (the query plan of `newest`, run with ANALYZE),
// `estate collect --store postgres://…`, and `estate migrate` from the schema
// before the series with data in it. What every store does alike is in
// test/store-contract.test.ts.

const BASE = Date.UTC(2026, 0, 1);

function sample(node: string, i: number): SeriesSample {
  const ts = new Date(BASE + i * 10_000).toISOString();
  return {
    trend: { ts, node, cpu_pct: i % 100 },
    disks: ['/', '/srv'].map((mount) => ({ ts, node, mount, fs_type: 'ext4', total_bytes: 100, used_bytes: 1, free_bytes: 99 })),
    pulse: { ts, node, status: 'healthy', checks: {} },
  };
}

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Scan Direction'?: string;
  Filter?: string;
  'Actual Rows': number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

test("newest of one node (and one mount) reads that node's newest rows through its index, and no other node's", { timeout: 120_000 }, async (t) => {
  const db = await migratedPostgres(t);
  if (!db) return;
  const { sql, store } = db;
  // 40 nodes × 250 samples, interleaved as a hub receives them.
  for (let round = 0; round < 10; round++) {
    const batch: SeriesSample[] = [];
    for (let i = 0; i < 25; i++) for (let n = 0; n < 40; n++) batch.push(sample(`node-${n}`, round * 25 + i));
    assert.equal((await store.series.ingest(batch)).stored, 1000);
  }
  await sql`ANALYZE`;

  const plan = async (series: 'trends' | 'disk', where?: { node?: string; mount?: string }): Promise<PlanNode> => {
    const query = newestQuery(series, 10, where);
    const [row] = await sql.unsafe(`EXPLAIN (ANALYZE, FORMAT JSON) ${query.text}`, query.params);
    const limit = (row?.['QUERY PLAN'] as { Plan: PlanNode }[])[0]?.Plan as PlanNode;
    const text = await sql.unsafe(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${query.text}`, query.params);
    t.diagnostic(`${series} ${JSON.stringify(where ?? {})}: ${text.map((r) => String(r['QUERY PLAN']).trim()).join(' | ')}`);
    assert.equal(limit['Node Type'], 'Limit');
    return limit.Plans?.[0] as PlanNode;
  };
  const ONE_NODE = /^\(\(node >= 'node-7'::text\) AND \(node <= 'node-7'::text\)\)$/;
  const indexScan = (scan: PlanNode, index: string, cond: RegExp) => {
    assert.equal(scan['Node Type'], 'Index Scan', JSON.stringify(scan));
    assert.equal(scan['Index Name'], index);
    assert.equal(scan['Scan Direction'], 'Backward', 'newest first, straight from the index');
    assert.match(scan['Index Cond'] ?? '', cond);
    assert.equal(scan.Filter, undefined, 'no row read and then thrown away');
    assert.equal(scan['Actual Rows'], 10, 'only the rows answered are read');
  };
  indexScan(await plan('trends', { node: 'node-7' }), 'series_trends_node', ONE_NODE);
  indexScan(await plan('disk', { node: 'node-7' }), 'series_disk_node', ONE_NODE);
  indexScan(await plan('disk', { node: 'node-7', mount: '/srv' }), 'series_disk_node_mount', /^\(\(node >= 'node-7'::text\) AND \(node <= 'node-7'::text\) AND \(mount >= '\/srv'::text\) AND \(mount <= '\/srv'::text\)\)$/);
  indexScan(await plan('disk', { mount: '/srv' }), 'series_disk_mount', /^\(\(mount >= '\/srv'::text\) AND \(mount <= '\/srv'::text\)\)$/);
  // The store's statements are prepared: a generic plan (the node not known when planned) reads the same index.
  const generic = newestQuery('trends', 10, { node: 'node-7' });
  await sql.unsafe(`SET plan_cache_mode = force_generic_plan`);
  await sql.unsafe(`PREPARE newest_of_node (text, int) AS ${generic.text}`);
  const [genericRow] = await sql.unsafe(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE newest_of_node ('node-7', 10)`);
  const genericScan = ((genericRow?.['QUERY PLAN'] as { Plan: PlanNode }[])[0]?.Plan as PlanNode).Plans?.[0] as PlanNode;
  indexScan(genericScan, 'series_trends_node', /^\(\(node >= \$1\) AND \(node <= \$1\)\)$/);
  await sql.unsafe(`DEALLOCATE newest_of_node; RESET plan_cache_mode`);
  const all = await plan('trends');
  assert.equal(all['Index Name'], 'series_trends_pkey');
  assert.equal(all['Actual Rows'], 10);

  // And the store answers what the plan reads: that node's newest, newest first.
  const page = await store.series.newest('disk', 3, { node: 'node-7', mount: '/srv' });
  assert.deepEqual(
    page.items.map((r) => [r.node, r.mount, r.ts]),
    [249, 248, 247].map((i) => ['node-7', '/srv', new Date(BASE + i * 10_000).toISOString()]),
  );
  // The nodes come from their own table, not from the records.
  const nodesPlan = (await sql`EXPLAIN (FORMAT JSON) SELECT node FROM series_nodes`)[0]?.['QUERY PLAN'] as { Plan: { 'Relation Name': string } }[];
  assert.equal(nodesPlan[0]?.Plan['Relation Name'], 'series_nodes');
  assert.equal((await store.series.nodes()).length, 40);
});

test('estate collect --once --store postgres://… writes the sample and the heartbeat to the store, and nothing to the data dir', { skip: process.platform !== 'linux' }, async (t) => {
  const pg = await postgresOrSkip(t);
  if (!pg) return;
  const dir = await tempDataDir(t);
  assert.equal((await runEstate(['migrate', '--store', pg.url, '--data-dir', dir])).code, 0);
  const collected = await runEstate(['collect', '--once', '--json', '--node', 'web-1', '--store', pg.url, '--data-dir', dir]);
  assert.equal(collected.code, 0, collected.stderr);
  const again = await runEstate(['collect', '--once', '--json', '--node', 'web-1', '--store', pg.url, '--data-dir', dir]);
  assert.equal(again.code, 0, again.stderr);

  const store = await openPostgres(t, pg);
  const trends = await store.series.newest('trends', 10, { node: 'web-1' });
  assert.deepEqual(trends.items, [again.json.trend, collected.json.trend], 'field for field, newest first');
  assert.deepEqual(Object.keys(trends.items[0] as object), Object.keys(again.json.trend), 'in the order written');
  assert.deepEqual((await store.series.newest('disk', 100, { node: 'web-1' })).items, [...again.json.disks].reverse().concat([...collected.json.disks].reverse()));
  assert.deepEqual((await store.series.newest('pulse', 1, { node: 'web-1' })).items, [again.json.pulse]);
  assert.deepEqual(await store.series.nodes(), ['web-1']);
  const heartbeat = await store.series.heartbeat();
  assert.deepEqual(heartbeat.data, { nodes: [{ name: 'web-1', last_seen: again.json.trend.ts, status: again.json.pulse.status }] });
  for (const file of ['trends.jsonl', 'disk.jsonl', 'health-pulse.jsonl', 'state/heartbeat.json']) {
    await assert.rejects(import('node:fs/promises').then((fs) => fs.stat(`${dir}/${file}`)), { code: 'ENOENT' }, `${file} not written`);
  }
});

test('estate migrate from schema version 2 with records in it adds the series; the records stay and the series work', async (t) => {
  const pg = await postgresOrSkip(t);
  if (!pg) return;
  const sql = sqlOf(t, pg);
  // As estate before the series left it, with a completion stored by its INSERT.
  await migrate(sql, 'test', VERSION, 2);
  const record = { completion_id: 'wc_0000000000000001', task_id: 'T-1', board: 'ops', assignee: 'ana', title: 'Task', completed_at: '2025-12-31T00:00:00.000Z' };
  await sql`INSERT INTO completions (id, board, task_id, record) VALUES (${record.completion_id}, 'ops', 'T-1', ${sql.json(record)})`;

  const dir = await tempDataDir(t);
  const refused = await runEstate(['collect', '--once', '--store', pg.url, '--data-dir', dir]);
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(refused.stderr, /^estate: the store postgres:\/\/postgres@[^ ]+ is unavailable \(schema missing\): run estate migrate; try again later\n$/);

  const migrated = await runEstate(['migrate', '--json', '--store', pg.url, '--data-dir', dir]);
  assert.equal(migrated.code, 0, migrated.stderr);
  assert.deepEqual([migrated.json.from, migrated.json.to, migrated.json.applied.map((m: { version: number }) => m.version)], [2, SCHEMA_VERSION, versionsAfter(2)]);

  const store = await openPostgres(t, pg);
  assert.deepEqual((await store.completions.newest(10)).records, [record]);
  assert.equal((await store.completions.tally([])).count, 1);
  assert.deepEqual(await store.series.ingest([sample('a', 0), sample('a', 0)]), { stored: 1, duplicates: 1 });
  assert.deepEqual(await store.series.nodes(), ['a']);
});

test('every series call on a PostgreSQL server that cannot be reached is unavailable (503), naming the store without its password', async (t) => {
  const store = openStore('postgres://estate:s3cret-pw@127.0.0.1:1/estate', { dataDir: await tempDataDir(t), config: parseConfig('{}', 'estate.config.json'), env: {} });
  t.after(() => store.close());
  const calls: [string, () => Promise<unknown>][] = [
    ['appendSample', () => store.series.appendSample(sample('a', 0))],
    ['ingest', () => store.series.ingest([sample('a', 0)])],
    ['mergeHeartbeat', () => store.series.mergeHeartbeat({ name: 'a', last_seen: new Date(BASE).toISOString(), status: 'healthy' })],
    ['heartbeat', () => store.series.heartbeat()],
    ['newest', () => store.series.newest('trends', 10, { node: 'a' })],
    ['nodes', () => store.series.nodes()],
    ['pages', async () => {
      for await (const _ of store.series.pages('disk', 10)) break;
    }],
    ['restore', () => store.series.restore('pulse', [{ ts: 'x' }])],
    ['restoreHeartbeat', () => store.series.restoreHeartbeat({ nodes: [] })],
  ];
  for (const [name, call] of calls) {
    await assert.rejects(call(), (err: Error & { code?: string; status?: number }) => {
      assert.equal(err.code, 'unavailable', name);
      assert.equal(err.message, 'the store postgres://estate@127.0.0.1:1/estate is unavailable (connection refused); try again later', name);
      return true;
    });
  }
});

test('PostgreSQL stores a record without node or ts once by its content, so a second store copy of other tools\' records finds them there', async (t) => {
  const db = await migratedPostgres(t);
  if (!db) return;
  const { store } = db;
  const legacy = [{ ts: '2026-01-01T00:00:00Z', load: 1 }, { load: 2 }, { ts: '2026-01-01T00:00:00Z', load: 1 }, { ts: 7, node: 'a', load: 3 }];
  assert.deepEqual(await store.series.restore('trends', legacy), { created: 3, present: 1 }, 'the same record twice in one call is one record');
  assert.deepEqual(await store.series.restore('trends', legacy), { created: 0, present: 4 });
  // The same fields in another order are another text: another record.
  assert.deepEqual(await store.series.restore('trends', [{ load: 1, ts: '2026-01-01T00:00:00Z' }]), { created: 1, present: 0 });
  const disks = [{ ts: '2026-01-01T00:00:00Z', node: 'a', used_bytes: 2 }];
  assert.deepEqual(await store.series.restore('disk', disks), { created: 1, present: 0 });
  assert.deepEqual(await store.series.restore('disk', disks), { created: 0, present: 1 }, 'a disk snapshot without a mount has no key either');
  // Two restores of the same records at once store each once (they wait on one lock).
  const more = Array.from({ length: 20 }, (_, i) => ({ cpu: i }));
  const both = await Promise.all([store.series.restore('pulse', more), store.series.restore('pulse', more)]);
  assert.equal(both[0].created + both[1].created, 20);
  assert.equal((await store.series.newest('pulse', 100)).count, 20);
  assert.deepEqual(await store.series.nodes(), ['a']);
});

test("two replicas on one PostgreSQL answer every node's series alike: what a hub ingested and what a collector wrote, per node, per mount, merged, and the heartbeat's events", { timeout: 120_000 }, async (t) => {
  const pg = await replicaPostgres(t);
  if (!pg) return;
  const replicas = await startReplicas(t, pg, 2);
  const dir = await tempDataDir(t);
  const { key } = await createKeyWithCli(pg, dir, 'ops');
  // A third hub (a store instance) ingests two nodes' samples; node c's own collector writes into the store.
  const hub = await openPostgres(t, pg);
  assert.deepEqual(await hub.series.ingest([sample('a', 1), sample('b', 2), sample('a', 3)]), { stored: 3, duplicates: 0 });
  const collected = await runEstate(['collect', '--once', '--json', '--node', 'c', '--store', pg.url, '--data-dir', dir]);
  assert.equal(collected.code, 0, collected.stderr);

  const answers = async (path: string) => {
    const [one, two] = await Promise.all(replicas.map((r) => r.request('GET', path, { key })));
    assert.equal(one?.status, 200, `${path}: ${one?.text}`);
    assert.deepEqual(one?.json, two?.json, `${path}: both replicas answer alike`);
    return one?.json;
  };
  const ts = (i: number) => new Date(BASE + i * 10_000).toISOString();
  assert.deepEqual((await answers('/trends?node=a')).items.map((r: { ts: string }) => r.ts), [ts(3), ts(1)]);
  assert.deepEqual((await answers('/disk?node=b&mount=%2Fsrv')).items.map((r: { node: string; mount: string }) => [r.node, r.mount]), [['b', '/srv']]);
  assert.deepEqual((await answers('/health/pulse?node=c')).items, [collected.json.pulse]);
  assert.deepEqual((await answers('/trends?limit=2')).items, [collected.json.trend, sample('a', 3).trend], 'every node, newest first as written');
  const events = (await answers('/events')).items as { subject: string; ts: string }[];
  for (const [node, at] of [['a', ts(3)], ['b', ts(2)], ['c', collected.json.trend.ts]]) {
    assert.ok(events.some((e) => e.subject === node && e.ts === at), `a heartbeat event of ${node} at ${at}: ${JSON.stringify(events)}`);
  }
});

test("concurrent ingests on one instance share heartbeat merges; each node's entry ends at its newest sample, whatever order they ran in", async (t) => {
  const db = await migratedPostgres(t);
  if (!db) return;
  const { sql, store } = db;
  await store.series.mergeHeartbeat({ name: 'quiet', last_seen: new Date(BASE).toISOString(), status: 'degraded' });
  // 60 ingests at once, one sample each, of 6 nodes, in a shuffled order (7 and 60 have no common factor: each sample once).
  const order = Array.from({ length: 60 }, (_, i) => (i * 7) % 60);
  const results = await Promise.all(order.map((i) => store.series.ingest([sample(`n${i % 6}`, i)])));
  assert.ok(results.every((r) => r.stored === 1));
  const nodes = ((await store.series.heartbeat()).data as { nodes: { name: string; last_seen: string; status: string }[] }).nodes;
  assert.deepEqual(
    Object.fromEntries(nodes.map((n) => [n.name, [n.last_seen, n.status]])),
    Object.fromEntries([['quiet', [new Date(BASE).toISOString(), 'degraded']], ...[54, 55, 56, 57, 58, 59].map((i) => [`n${i % 6}`, [new Date(BASE + i * 10_000).toISOString(), 'healthy']])]),
  );
  const [row] = await sql`SELECT count(*)::int AS n FROM series_heartbeat`;
  assert.equal(row?.n, 1);
});

test('migration 5 rolls up the trend points and disk snapshots stored before it, and its trigger every insert after, whoever inserts', async (t) => {
  const pg = await postgresOrSkip(t);
  if (!pg) return;
  const sql = sqlOf(t, pg);
  await migrate(sql, 'test', VERSION, 4);
  const base = Math.floor((Date.now() - 86_400_000) / 3_600_000) * 3_600_000;
  const ts = (s: number) => new Date(base + s * 1000).toISOString();
  for (const [i, cpu] of [3, 5, 10].entries()) {
    const record = { ts: ts(i * 20), node: 'old', cpu_pct: cpu, huge: 1e300 * 10, note: 'x' };
    await sql`INSERT INTO series_trends (node, ts, record) VALUES ('old', ${record.ts}, ${JSON.stringify(record)}::text::json)`;
  }
  await migrate(sql, 'test', VERSION);
  // Another tool's INSERT, straight into the table: the trigger rolls it up too, and a number no double holds is no field.
  await sql`INSERT INTO series_trends (node, ts, record) VALUES ('old', ${ts(70)}, ${`{"ts":"${ts(70)}","node":"old","cpu_pct":2,"tiny":1e-400,"huge":1e999}`}::text::json)`;
  const store = await openPostgres(t, pg);
  const answer = await store.series.range('trends', { fromMs: base, toMs: base + 120_000, points: 2, node: 'old' });
  assert.equal(answer.tier, '1m');
  assert.deepEqual(answer.items, [
    { ts: ts(0), count: 3, min: { cpu_pct: 3, huge: 1e301 }, mean: { cpu_pct: 6, huge: 1e301 }, max: { cpu_pct: 10, huge: 1e301 } },
    { ts: ts(60), count: 1, min: { cpu_pct: 2 }, mean: { cpu_pct: 2 }, max: { cpu_pct: 2 } },
  ]);
  const [rows] = await sql`SELECT count(*)::int AS n FROM series_rollups WHERE series = 'trends' AND tier = '1h' AND field = ''`;
  assert.equal(rows?.n, 1);
});
