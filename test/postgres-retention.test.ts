import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { migrate } from '../src/core/store/postgres/migrate.ts';
import { MIGRATIONS } from '../src/core/store/postgres/migrations.ts';
import type { JsonRecord, Store } from '../src/core/store/store.ts';
import { VERSION } from '../src/version.ts';
import { runEstate, startEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { openPostgres, postgresOrSkip, sqlOf, versionsAfter } from './helpers/postgres-store.ts';
import { migrateWithCli } from './helpers/replicas.ts';
import { samplesOf } from './helpers/samples.ts';
import { waitUntil } from './helpers/wait-until.ts';

// Retention on a PostgreSQL store (Series.prune, DESIGN.md 7a): `estate prune
// --store postgres://…` and hubs applying collect.retention, on a real server.

type Json = Record<string, any>;

const DAY = 86_400_000;
const SERIES = ['trends', 'disk', 'pulse'] as const;

async function allRecords(store: Store, series: (typeof SERIES)[number]): Promise<JsonRecord[]> {
  const out: JsonRecord[] = [];
  for await (const page of store.series.pages(series, 1000)) out.push(...page.records);
  return out;
}

const jsonl = (records: readonly object[]) => records.map((r) => `${JSON.stringify(r)}\n`).join('');

test('estate prune --store postgres:// deletes the series rows dated before the cutoff, keeps undated ones, and reads stay right', async (t) => {
  const pg = await postgresOrSkip(t);
  if (!pg) return;
  const dir = await tempDataDir(t);
  await migrateWithCli(pg, dir);
  // Other tools' records, copied in as they are: dated ones old and recent, and ones that cannot be dated.
  const old = new Date(Date.now() - 3 * DAY).toISOString();
  const oldWithOffset = '2020-01-01T10:00:00+02:00';
  const recent = new Date(Date.now() - 3_600_000).toISOString();
  const undated = [{ node: 'a', cpu_pct: 1 }, { ts: 'yesterday', node: 'a' }, { ts: 7, node: 'a' }, { ts: '2020-02-30T00:00:00Z', node: 'a' }];
  const kept = {
    trends: [{ ts: recent, node: 'a', cpu_pct: 3 }, ...undated],
    disk: [{ ts: recent, node: 'a', mount: '/', used_bytes: 1, free_bytes: 2 }, { node: 'a', mount: '/' }],
    pulse: [{ ts: recent, node: 'a', status: 'healthy', checks: {} }, { ts: 'soon', node: 'a', status: 'healthy' }],
  };
  const dropped = {
    trends: [{ ts: old, node: 'a', cpu_pct: 1 }, { ts: old, node: 'b', cpu_pct: 2 }, { ts: oldWithOffset, node: 'b', cpu_pct: 4 }],
    disk: [{ ts: old, node: 'a', mount: '/', used_bytes: 1, free_bytes: 2 }, { ts: old, node: 'b', mount: '/', used_bytes: 1, free_bytes: 2 }],
    pulse: [{ ts: old, node: 'b', status: 'healthy', checks: {} }],
  };
  const src = await tempDataDir(t);
  const files = { trends: 'trends.jsonl', disk: 'disk.jsonl', pulse: 'health-pulse.jsonl' };
  for (const series of SERIES) await writeFile(path.join(src, files[series]), jsonl([...dropped[series], ...kept[series]]));
  await writeFile(path.join(dir, 'builds.jsonl'), jsonl([{ ts: old, id: 'b-1' }, { ts: recent, id: 'b-2' }]));
  const copied = await runEstate(['store', 'copy', '--from', src, '--to', pg.url, '--json'], { timeoutMs: 60_000 });
  assert.equal(copied.code, 0, copied.stderr);
  const store = await openPostgres(t, pg);
  assert.deepEqual(await store.series.nodes(), ['a', 'b']);

  const prune = (...extra: string[]) => runEstate(['prune', '--older-than', '1d', '--json', '--store', pg.url, '--data-dir', dir, ...extra]);
  const dry = await prune('--dry-run');
  assert.equal(dry.code, 0, dry.stderr);
  const described = `postgres://postgres@127.0.0.1:${pg.port}/${pg.database}`;
  assert.deepEqual(dry.json.logs, {
    trends: { store: described, dropped: 3 },
    disk: { store: described, dropped: 2 },
    pulse: { store: described, dropped: 1 },
    builds: { file: 'builds.jsonl', dropped: 1, kept: 1, undated: 0, bytes_before: dry.json.logs.builds.bytes_before, bytes_after: dry.json.logs.builds.bytes_after },
  });
  assert.equal(dry.json.dry_run, true);
  for (const series of SERIES) assert.equal((await allRecords(store, series)).length, kept[series].length + dropped[series].length, `${series}: a dry run deletes nothing`);

  const real = await prune();
  assert.equal(real.code, 0, real.stderr);
  assert.deepEqual(
    Object.fromEntries(Object.entries(real.json.logs as Json).map(([name, log]) => [name, log.dropped])),
    { trends: 3, disk: 2, pulse: 1, builds: 1 },
  );
  for (const series of SERIES) assert.deepEqual(await allRecords(store, series), kept[series], `${series}: the recent and the undated rows, in their order`);

  // Reads after: node a's rows through its index, b (no row left) gone from the nodes, as on the data dir.
  assert.deepEqual(await store.series.nodes(), ['a']);
  assert.deepEqual((await store.series.newest('trends', 10, { node: 'a' })).items, [...kept.trends].reverse().filter((r) => 'node' in r));
  assert.deepEqual((await store.series.newest('disk', 10, { node: 'b' })).items, []);
  const trends = await runEstate(['trends', '--node', 'a', '--limit', '1', '--json', '--store', pg.url, '--data-dir', dir]);
  assert.equal(trends.code, 0, trends.stderr);
  assert.deepEqual(trends.json.items, [kept.trends.at(-1)]);
  const nodes = await runEstate(['nodes', '--json', '--store', pg.url, '--data-dir', dir]);
  assert.equal(nodes.code, 0, nodes.stderr);
  assert.deepEqual(nodes.json.items.map((n: Json) => n.name), ['a']);

  // Nothing left to drop: a second prune drops nothing; a sample of b ingested again makes b a node again.
  const again = await prune('--log', 'trends');
  assert.equal(again.code, 0, again.stderr);
  assert.equal(again.json.logs.trends.dropped, 0);
  await store.series.ingest(samplesOf('b', 1, new Date()) as never);
  assert.deepEqual(await store.series.nodes(), ['a', 'b']);

  // The text form names the store without its password.
  const text = await runEstate(['prune', '--older-than', '1d', '--log', 'pulse', '--store', pg.url, '--data-dir', dir]);
  assert.equal(text.code, 0, text.stderr);
  assert.equal(text.stdout, `pulse in ${described}: dropped 0\n`);
});

test('estate migrate from schema version 3 with series rows adds the time index; prune then deletes only the old rows', async (t) => {
  const pg = await postgresOrSkip(t);
  if (!pg) return;
  const sql = sqlOf(t, pg);
  await migrate(sql, 'test', VERSION, 3);
  const old = new Date(Date.now() - 3 * DAY).toISOString();
  const recent = new Date().toISOString();
  for (const [node, ts] of [['a', old], ['a', recent], ['a', null]] as const) {
    await sql`INSERT INTO series_trends (node, ts, record) VALUES (${node}, ${ts}, ${sql.json({ ts: ts ?? undefined, node })})`;
  }
  const dir = await tempDataDir(t);
  const before = await runEstate(['prune', '--older-than', '1d', '--store', pg.url, '--data-dir', dir]);
  assert.equal(before.code, 2, 'the schema is older than this estate needs: a usage error');
  assert.match(before.stderr, /estate migrate/);

  const migrated = await runEstate(['migrate', '--json', '--store', pg.url, '--data-dir', dir]);
  assert.equal(migrated.code, 0, migrated.stderr);
  assert.deepEqual(migrated.json.applied.map((m: { version: number }) => m.version), versionsAfter(3));
  // Three rows are read faster whole; without that choice the planner finds the cutoff through the new index.
  await sql`SET enable_seqscan = off`;
  const [plan] = await sql.unsafe(`EXPLAIN (FORMAT JSON) SELECT seq FROM series_trends WHERE series_ts_time(ts) < now()`);
  assert.match(JSON.stringify(plan), /"Index Name":"series_trends_time"/, 'the cutoff can be found through the index');

  const pruned = await runEstate(['prune', '--older-than', '1d', '--log', 'trends', '--json', '--store', pg.url, '--data-dir', dir]);
  assert.equal(pruned.code, 0, pruned.stderr);
  assert.equal(pruned.json.logs.trends.dropped, 1);
  assert.deepEqual((await sql`SELECT ts FROM series_trends ORDER BY seq`).map((r) => r.ts), [recent, null]);
});

test('two hubs on one PostgreSQL apply collect.retention at once: every old row deleted once between them, the recent ones kept', { timeout: 180_000 }, async (t) => {
  const pg = await postgresOrSkip(t);
  if (!pg) return;
  const seedDir = await tempDataDir(t);
  await migrateWithCli(pg, seedDir);
  const store = await openPostgres(t, pg);
  // More old rows per series than one prune batch (10,000), so two hubs at once split them.
  const longAgo = new Date(Date.now() - 3 * DAY);
  const nodes = ['n0', 'n1', 'n2'];
  const oldPerNode = 4000;
  for (const node of nodes) {
    const samples = samplesOf(node, oldPerNode, longAgo);
    for (let i = 0; i < samples.length; i += 1000) await store.series.ingest(samples.slice(i, i + 1000) as never);
    await store.series.ingest(samplesOf(node, 2, new Date()) as never);
  }
  const sql = sqlOf(t, pg);
  const oldRows = async () => {
    const last = longAgo.toISOString();
    const [row] = await sql`SELECT (SELECT count(*) FROM series_trends WHERE ts <= ${last}) + (SELECT count(*) FROM series_disk WHERE ts <= ${last}) + (SELECT count(*) FROM series_pulse WHERE ts <= ${last}) AS n`;
    return Number(row?.n);
  };
  assert.equal(await oldRows(), 3 * nodes.length * oldPerNode);
  // A pass with nothing to delete reads the index alone, whatever the table holds.
  await sql`ANALYZE series_trends`;
  const before = new Date(longAgo.getTime() - oldPerNode * 1000 - DAY).toISOString();
  const [explained] = await sql.unsafe(`EXPLAIN (ANALYZE, FORMAT JSON) SELECT seq FROM series_trends WHERE series_ts_time(ts) < $1 LIMIT 10000`, [before]);
  const plan = JSON.stringify(explained);
  assert.match(plan, /"Index Name":"series_trends_time"/, plan);
  assert.doesNotMatch(plan, /Seq Scan/, plan);

  const hubs = await Promise.all(
    [0, 1].map(async () => {
      const dir = await tempDataDir(t);
      await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ collect: { retention: '1d' } }));
      return startEstate(t, ['serve', '--port', '0', '--quiet', '--log-format', 'json', '--data-dir', dir, '--store', pg.url]);
    }),
  );
  await waitUntil('every old row is deleted', async () => (await oldRows()) === 0, 120_000);
  const stopped = await Promise.all(hubs.map((hub) => hub.stop()));
  const lines = stopped.flatMap((s) => {
    assert.equal(s.code, 0, s.stderr);
    return s.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Json);
  });
  assert.deepEqual(lines.filter((l) => l.event === 'collect_prune_failed'), []);
  const total = { trends: 0, disk: 0, pulse: 0 };
  for (const line of lines.filter((l) => l.event === 'collect_pruned')) for (const series of SERIES) total[series] += line.dropped[series];
  const expected = nodes.length * oldPerNode;
  assert.deepEqual(total, { trends: expected, disk: expected, pulse: expected }, 'each old row counted by the one hub that deleted it');
  for (const node of nodes) {
    assert.equal((await store.series.newest('trends', 10, { node })).items.length, 2, `${node}: its recent points stay`);
  }
  assert.deepEqual(await store.series.nodes(), nodes);
});

test('estate collect --store postgres:// applies collect.retention to the store\'s tables', { skip: process.platform !== 'linux' }, async (t) => {
  const pg = await postgresOrSkip(t);
  if (!pg) return;
  const dir = await tempDataDir(t);
  await migrateWithCli(pg, dir);
  const store = await openPostgres(t, pg);
  await store.series.ingest(samplesOf('elsewhere', 3, new Date(Date.now() - 3 * DAY)) as never);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ collect: { retention: '1d' } }));
  const collected = await runEstate(['collect', '--once', '--node', 'here', '--store', pg.url, '--data-dir', dir]);
  assert.equal(collected.code, 0, collected.stderr);
  for (const series of SERIES) assert.deepEqual((await allRecords(store, series)).map((r) => r.node), ['here'], `${series}: the old samples are gone, the new one is there`);
  assert.deepEqual(await store.series.nodes(), ['here']);
});
