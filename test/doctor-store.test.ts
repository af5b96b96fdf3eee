import assert from 'node:assert/strict';
import { test } from 'node:test';
import postgres from 'postgres';
import { SCHEMA_VERSION } from '../src/core/store/postgres/migrations.ts';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { startPostgres } from './helpers/postgres.ts';

// `estate doctor` checks the store it would use: the data dir's, or a
// PostgreSQL store's connection, schema version and the role's privileges,
// each with a fix, never showing a password.

type Check = { name: string; status: string; detail: string; fix: string | null };
const storeChecks = (json: { checks: Check[] }) => json.checks.filter((c) => c.name.startsWith('store'));

test('estate doctor on the data dir store: one ok line for it', async (t) => {
  const dir = await tempDataDir(t);
  const r = await runEstate(['doctor', '--json', '--data-dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(storeChecks(r.json).map((c) => [c.name, c.status]), [['store', 'ok']]);
  const bad = await runEstate(['doctor', '--json', '--data-dir', dir, '--store', 'mysql://x']);
  assert.equal(bad.code, 1);
  assert.deepEqual(storeChecks(bad.json).map((c) => [c.name, c.status]), [['store', 'fail']]);
});

test('estate doctor on PostgreSQL: connection, schema version and privileges, each with a fix', async (t) => {
  const pg = await startPostgres(t);
  if (!pg) return t.skip('PostgreSQL is not installed (apt-get install postgresql)');
  const dir = await tempDataDir(t);
  const doctor = (store: string, env: Record<string, string> = {}) => runEstate(['doctor', '--json', '--data-dir', dir, '--store', store], { env });

  const fresh = await doctor(pg.urlWithoutPassword, { PGPASSWORD: pg.password });
  assert.equal(fresh.code, 1);
  const [connection, schema] = storeChecks(fresh.json);
  assert.equal(connection?.status, 'ok');
  assert.match(connection?.detail ?? '', /PostgreSQL 1\d.* as postgres/);
  assert.deepEqual([schema?.name, schema?.status, schema?.detail], ['store schema', 'fail', `version 0; this estate needs version ${SCHEMA_VERSION}`]);
  assert.match(schema?.fix ?? '', /^run: estate migrate --store postgres:\/\/postgres@127\.0\.0\.1:\d+\//);

  assert.equal((await runEstate(['migrate', '--store', pg.url, '--data-dir', dir])).code, 0);
  const migrated = await doctor(pg.url);
  assert.equal(migrated.code, 0, migrated.stdout);
  assert.deepEqual(storeChecks(migrated.json).map((c) => [c.name, c.status]), [['store', 'ok'], ['store schema', 'ok'], ['store privileges', 'ok']]);
  assert.ok(!migrated.stdout.includes(pg.password), 'the password is never shown');
  // No key in the database yet: a warning whose command names the same store, without its password.
  const keys = (migrated.json.checks as Check[]).find((c) => c.name === 'API keys');
  assert.deepEqual([keys?.status, keys?.fix?.replace(/:\d+\//, ':PORT/')], ['warn', `create one with: estate keys create --user NAME --store postgres://postgres@127.0.0.1:PORT/${pg.database}`]);
  assert.equal((await runEstate(['keys', 'create', '--user', 'alice', '--store', pg.url, '--data-dir', dir])).code, 0);
  assert.equal(((await doctor(pg.url)).json.checks as Check[]).find((c) => c.name === 'API keys')?.status, 'ok', 'the key is counted in the database');
  // On a host with no data dir (docs/store.md: "on any machine with estate"), the store is checked all the same.
  const elsewhere = await runEstate(['doctor', '--json', '--data-dir', `${dir}-none`, '--store', pg.url]);
  assert.equal(elsewhere.code, 1, 'the missing data dir still fails');
  assert.deepEqual(storeChecks(elsewhere.json).map((c) => [c.name, c.status]), [['store', 'ok'], ['store schema', 'ok'], ['store privileges', 'ok']]);

  // A role that may read but not write.
  const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE ROLE estate_reader LOGIN PASSWORD 'reader-pw-7c1e'; GRANT SELECT ON ALL TABLES IN SCHEMA public TO estate_reader`);
  await admin.end();
  t.after(async () => {
    const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
    await sql.unsafe('DROP OWNED BY estate_reader; DROP ROLE estate_reader').catch(() => {});
    await sql.end();
  });
  const reader = await doctor(pg.url.replace(/\/\/postgres:[^@]*@/, '//estate_reader:reader-pw-7c1e@'));
  assert.equal(reader.code, 1);
  const privileges = storeChecks(reader.json).find((c) => c.name === 'store privileges');
  assert.equal(privileges?.status, 'fail');
  assert.match(privileges?.detail ?? '', /missing: INSERT on completions, INSERT on entries, .*USAGE on sequence completions_event_id_seq/);
  assert.match(privileges?.fix ?? '', /GRANT/);
  assert.ok(!reader.stdout.includes('reader-pw-7c1e'));

  // Granted exactly what estate uses (no UPDATE on training_runs, no other sequence), the role passes.
  const owner = postgres(pg.url, { max: 1, onnotice: () => {} });
  await owner.unsafe(`CREATE SEQUENCE unrelated_seq;
    GRANT INSERT ON completions, entries, training_runs, api_keys, token_secret TO estate_reader;
    GRANT DELETE ON training_runs TO estate_reader; GRANT UPDATE ON api_keys TO estate_reader;
    GRANT INSERT ON tally_groups, tally_distinct, tally_buckets TO estate_reader; GRANT UPDATE ON tally_groups, tally_buckets TO estate_reader;
    GRANT INSERT ON series_trends, series_disk, series_pulse, series_nodes, series_heartbeat TO estate_reader; GRANT UPDATE ON series_heartbeat TO estate_reader;
    GRANT DELETE ON series_trends, series_disk, series_pulse, series_nodes TO estate_reader;
    GRANT INSERT, UPDATE, DELETE ON series_rollups TO estate_reader;
    GRANT INSERT, DELETE ON provider_probes TO estate_reader;
    GRANT INSERT ON work_starts, watched_events TO estate_reader; GRANT DELETE ON watched_events TO estate_reader;
    GRANT INSERT, UPDATE, DELETE ON notify_targets, notify_deliveries TO estate_reader;
    GRANT USAGE ON SEQUENCE completions_event_id_seq, entries_event_id_seq, api_keys_seq_seq, series_trends_seq_seq, series_disk_seq_seq, series_pulse_seq_seq, provider_probes_seq_seq, work_starts_event_id_seq, notify_deliveries_seq_seq, watched_events_event_id_seq TO estate_reader`);
  await owner.end();
  const granted = await doctor(pg.url.replace(/\/\/postgres:[^@]*@/, '//estate_reader:reader-pw-7c1e@'));
  assert.deepEqual(storeChecks(granted.json).map((c) => [c.name, c.status]), [['store', 'ok'], ['store schema', 'ok'], ['store privileges', 'ok']], granted.stdout);
  // And with them it writes (the counts its trigger keeps included) and reads the aggregates.
  const asReader = pg.url.replace(/\/\/postgres:[^@]*@/, '//estate_reader:reader-pw-7c1e@');
  for (const task of ['G-1', 'G-2']) {
    const wrote = await runEstate(['work', 'complete', '--task-id', task, '--board', 'ops', '--assignee', 'ana', '--title', 'granted', '--store', asReader, '--data-dir', dir]);
    assert.equal(wrote.code, 0, wrote.stderr);
  }
  // The collector's sample, its node and the heartbeat, twice (the second changes the heartbeat row).
  if (process.platform === 'linux') {
    for (let i = 0; i < 2; i++) {
      const collected = await runEstate(['collect', '--once', '--node', 'granted-1', '--store', asReader, '--data-dir', dir]);
      assert.equal(collected.code, 0, collected.stderr);
    }
  }

  // Retention: an old row deleted, and its node, left with none, taken out of series_nodes under that table's lock.
  const seed = postgres(pg.url, { max: 1, onnotice: () => {} });
  await seed`INSERT INTO series_trends (node, ts, record) VALUES ('old-node', '2020-01-01T00:00:00.000Z', ${seed.json({ ts: '2020-01-01T00:00:00.000Z', node: 'old-node' })})`;
  await seed.end();
  const pruned = await runEstate(['prune', '--older-than', '1d', '--log', 'trends', '--json', '--store', asReader, '--data-dir', dir]);
  assert.equal(pruned.code, 0, pruned.stderr);
  assert.equal(pruned.json.logs.trends.dropped, 1);

  const wrong = await doctor(pg.url.replace(pg.password, 'not-the-password-9d2b'));
  assert.equal(wrong.code, 1);
  assert.deepEqual(storeChecks(wrong.json).map((c) => [c.status, c.detail.replace(/:\d+/, ':PORT')]), [['fail', `postgres://postgres@127.0.0.1:PORT/${pg.database}: authentication failed`]]);
  assert.match(storeChecks(wrong.json)[0]?.fix ?? '', /PGPASSWORD/);

  const refused = await doctor(`postgres://postgres:x@127.0.0.1:1/${pg.database}`);
  assert.equal(refused.code, 1);
  assert.deepEqual(storeChecks(refused.json).map((c) => [c.status, c.detail]), [['fail', `postgres://postgres@127.0.0.1:1/${pg.database}: connection refused`]]);
});
