import assert from 'node:assert/strict';
import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import postgres from 'postgres';
import { parseConfig } from '../src/config.ts';
import type { JsonRecord } from '../src/core/jsonl/parse-record.ts';
import { openPostgresStore } from '../src/core/store/postgres-store.ts';
import { migrate, migrateStore } from '../src/core/store/postgres/migrate.ts';
import { MIGRATIONS, SCHEMA_VERSION } from '../src/core/store/postgres/migrations.ts';
import { VERSION } from '../src/version.ts';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { startPostgres, type TestPostgres } from './helpers/postgres.ts';
import { startServer } from './helpers/server.ts';
import { waitUntil } from './helpers/wait-until.ts';

// The PostgreSQL store against a real PostgreSQL server (test/helpers/postgres.ts):
// `estate migrate`, the schema version check at start, and a server whose
// PostgreSQL goes away. The behaviour both stores share is in store-contract.test.ts.

async function postgresOrSkip(t: TestContext, options: { dedicated?: boolean } = {}): Promise<TestPostgres | undefined> {
  const pg = await startPostgres(t, options);
  if (!pg) t.skip('PostgreSQL is not installed (apt-get install postgresql)');
  return pg;
}

/** Runs `statement` in the test's database, as its owner. */
async function query(pg: TestPostgres, statement: string): Promise<postgres.RowList<postgres.Row[]>> {
  const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
  try {
    return await sql.unsafe(statement);
  } finally {
    await sql.end();
  }
}

const completion = (taskId: string) => ({ task_id: taskId, board: 'ops', assignee: 'ana', title: `task ${taskId}` });

test('estate migrate creates the schema once, with the password from PGPASSWORD, a PGPASSFILE or ESTATE_STORE', async (t) => {
  const pg = await postgresOrSkip(t);
  if (!pg) return;
  const dir = await tempDataDir(t);
  const first = await runEstate(['migrate', '--store', pg.urlWithoutPassword, '--data-dir', dir], { env: { PGPASSWORD: pg.password } });
  assert.equal(first.code, 0, first.stderr);
  // One line per migration, in order, whatever versions later migrations add.
  const applied = [...MIGRATIONS].sort((a, b) => a.version - b.version).map((m) => `applied ${m.version}: .+\\n`).join('');
  assert.match(first.stdout, new RegExp(`^${applied}.* migrated from schema version 0 to ${SCHEMA_VERSION}\\n$`));
  const tables = await query(pg, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name");
  assert.deepEqual(
    tables.map((r) => r.table_name),
    [
      'api_keys',
      'completions',
      'entries',
      'notify_deliveries',
      'notify_targets',
      'provider_probes',
      'schema_version',
      'series_disk',
      'series_heartbeat',
      'series_nodes',
      'series_pulse',
      'series_rollups',
      'series_trends',
      'tally_buckets',
      'tally_distinct',
      'tally_groups',
      'token_secret',
      'training_runs',
      'watched_events',
      'work_starts',
    ],
  );

  const passfile = path.join(dir, 'pgpass');
  await writeFile(passfile, `# estate\n127.0.0.1:${pg.port}:${pg.database}:postgres:${pg.password}\n`);
  await chmod(passfile, 0o600);
  const again = await runEstate(['migrate', '--json', '--data-dir', dir], { env: { ESTATE_STORE: pg.urlWithoutPassword, PGPASSFILE: passfile } });
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(again.json, { store: `postgres://postgres@127.0.0.1:${pg.port}/${pg.database}`, from: SCHEMA_VERSION, to: SCHEMA_VERSION, applied: [] });
  const versions = await query(pg, 'SELECT version, applied_by FROM schema_version ORDER BY version');
  assert.deepEqual(
    versions.map((r) => [r.version, r.applied_by]),
    [...MIGRATIONS].sort((a, b) => a.version - b.version).map((m) => [m.version, `estate ${VERSION}`]),
  );
});

test('estate migrate: a wrong password or no PostgreSQL store is a clear error that never shows the password', async (t) => {
  const pg = await postgresOrSkip(t);
  if (!pg) return;
  const dir = await tempDataDir(t);
  const wrong = pg.url.replace(pg.password, 'not-the-password-5f3a');
  const refused = await runEstate(['migrate', '--store', wrong, '--data-dir', dir]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /the store postgres:\/\/postgres@127\.0\.0\.1:\d+\/estate_test_\w+ is unavailable \(authentication failed\)/);
  assert.ok(!refused.stderr.includes('not-the-password-5f3a'));
  assert.equal(refused.stdout, '');

  const none = await runEstate(['migrate', '--data-dir', dir]);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /estate migrate needs a PostgreSQL store: pass --store postgres:\/\/… or set ESTATE_STORE/);
});

test('a store without the schema: estate serve refuses to start and says to run estate migrate; other commands say so too', async (t) => {
  const pg = await postgresOrSkip(t);
  if (!pg) return;
  const dir = await tempDataDir(t);
  const serve = await runEstate(['serve', '--port', '0', '--data-dir', dir, '--store', pg.url]);
  assert.equal(serve.code, 2, serve.stderr);
  assert.match(serve.stderr, new RegExp(`has no estate schema yet; this estate needs version ${SCHEMA_VERSION}: run estate migrate`));
  assert.ok(!serve.stderr.includes(pg.password));

  const feed = await runEstate(['work', 'feed', '--data-dir', dir, '--store', pg.url]);
  assert.equal(feed.code, 1);
  assert.match(feed.stderr, /unavailable \(schema missing\): run estate migrate/);
});

test('a store that has a later migration but misses earlier ones (another branch migrated it): estate serve says to migrate, and estate migrate applies exactly the missing ones', async (t) => {
  const pg = await postgresOrSkip(t);
  if (!pg) return;
  const dir = await tempDataDir(t);
  const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
  t.after(() => sql.end());
  await migrate(sql, 'test', VERSION, 5);
  // Migration 8 applied on its own, as a build with 8 and without 6 and 7 would have done.
  const eight = MIGRATIONS.find((m) => m.version === 8);
  assert.ok(eight);
  await sql.unsafe(eight.sql);
  await sql`INSERT INTO schema_version (version, description, applied_by) VALUES (8, ${eight.description}, 'estate of another branch')`;

  const serve = await runEstate(['serve', '--port', '0', '--data-dir', dir, '--store', pg.url]);
  assert.equal(serve.code, 2, serve.stderr);
  assert.match(serve.stderr, new RegExp(`has schema version 5; this estate needs version ${SCHEMA_VERSION}: run estate migrate`));

  const migrated = await runEstate(['migrate', '--json', '--data-dir', dir, '--store', pg.url]);
  assert.equal(migrated.code, 0, migrated.stderr);
  const missing = MIGRATIONS.map((m) => m.version).filter((v) => v > 5 && v !== 8).sort((a, b) => a - b);
  assert.deepEqual([migrated.json.from, migrated.json.to, migrated.json.applied.map((m: { version: number }) => m.version)], [5, SCHEMA_VERSION, missing]);
  const work = await runEstate(['work', 'start', '--board', 'ops', '--task-id', 'run-1', '--json', '--data-dir', dir, '--store', pg.url]);
  assert.equal(work.code, 0, work.stderr);
});

test('a store with a newer schema: estate serve and estate migrate refuse, saying which version this estate needs', async (t) => {
  const pg = await postgresOrSkip(t);
  if (!pg) return;
  const dir = await tempDataDir(t);
  await migrateStore(pg.url, {}, VERSION);
  const newer = SCHEMA_VERSION + 1;
  await query(pg, `INSERT INTO schema_version (version, description, applied_by) VALUES (${newer}, 'from the future', 'estate 99.0.0')`);
  const expected = new RegExp(`has schema version ${newer}, newer than this estate knows; it needs version ${SCHEMA_VERSION}: upgrade estate`);
  const serve = await runEstate(['serve', '--port', '0', '--data-dir', dir, '--store', pg.url]);
  assert.equal(serve.code, 2, serve.stderr);
  assert.match(serve.stderr, expected);
  const migrate = await runEstate(['migrate', '--data-dir', dir, '--store', pg.url]);
  assert.equal(migrate.code, 2, migrate.stderr);
  assert.match(migrate.stderr, expected);
  assert.equal((await query(pg, 'SELECT max(version)::int AS v FROM schema_version'))[0]?.v, newer, 'nothing was changed');
});

test('PostgreSQL stopped: writes and reads are 503 with Retry-After naming the store, /readyz is 503, and the server recovers with no restart', async (t) => {
  const pg = await postgresOrSkip(t, { dedicated: true });
  if (!pg) return;
  const dir = await tempDataDir(t);
  await migrateStore(pg.url, {}, VERSION);
  const server = await startServer(t, dir, { env: { ESTATE_STORE: pg.url } });
  const { key } = await server.ctx.store.credentials.create({ userId: 'alice' });
  const headers = { 'X-API-Key': key };
  const post = (taskId: string) => server.request('POST', '/work/complete', { headers, body: completion(taskId) });
  const acknowledged = await post('t1');
  assert.equal(acknowledged.status, 201, acknowledged.text);
  assert.equal((await server.get('/readyz')).status, 200);
  const described = `postgres://postgres@127.0.0.1:${pg.port}/${pg.database}`;

  await pg.halt();
  for (const r of [await post('t2'), await server.get('/work/feed', headers), await server.get('/training/runs', headers)]) {
    assert.equal(r.status, 503, r.text);
    assert.equal(r.headers.get('retry-after'), '5');
    assert.ok(r.json.detail.includes(`the store ${described} is unavailable`), r.json.detail);
    assert.ok(!r.text.includes(pg.password));
  }
  const ready = await server.get('/readyz');
  assert.equal(ready.status, 503);
  assert.match(ready.json.detail, /^not ready: store failed \(connection refused\)/);
  assert.equal((await server.get('/healthz')).status, 200);
  const cli = await runEstate(['work', 'feed', '--data-dir', dir, '--store', pg.url]);
  assert.equal(cli.code, 1);
  assert.match(cli.stderr, /is unavailable \(connection refused\)/);
  assert.ok(!cli.stderr.includes(pg.password));

  await pg.resume();
  const replay = await post('t1');
  assert.equal(replay.status, 200, 'the write acknowledged before the outage is still there');
  assert.deepEqual(replay.json, acknowledged.json);
  assert.equal((await post('t2')).status, 201);
  assert.equal((await server.get('/readyz')).status, 200);
  const feed = await server.get('/work/feed', headers);
  assert.deepEqual(
    feed.json.items.map((r: { task_id: string }) => r.task_id),
    ['t2', 't1'],
  );
});

test('a subscription outlives a PostgreSQL restart: what is written after it comes back reaches the listener, once', async (t) => {
  const pg = await postgresOrSkip(t, { dedicated: true });
  if (!pg) return;
  await migrateStore(pg.url, {}, VERSION);
  const options = { dataDir: '/nonexistent', config: parseConfig('{}', 'estate.config.json'), env: {} };
  const [reader, writer] = [await openPostgresStore(pg.url, options), await openPostgresStore(pg.url, options)];
  t.after(() => Promise.all([reader.close(), writer.close()]));
  const seen: JsonRecord[] = [];
  const errors: unknown[] = [];
  const unsubscribe = await reader.completions.subscribe((records) => seen.push(...records), (err) => errors.push(err));
  const now = () => new Date();
  await writer.completions.write(completion('before'), now);
  await waitUntil('the first record arrives', () => seen.length === 1);

  await pg.halt();
  await waitUntil('the lost connection is reported', () => errors.length > 0);
  await pg.resume();
  for (const id of ['after-1', 'after-2']) assert.equal((await writer.completions.write(completion(id), now)).outcome, 'created');
  await waitUntil('the records written after the restart arrive', () => seen.length >= 3);
  assert.deepEqual(
    seen.map((r) => r.task_id),
    ['before', 'after-1', 'after-2'],
  );
  await unsubscribe();
});

test('after a PostgreSQL restart the store listens again: a LISTEN session is back, not only the poll', { timeout: 120_000 }, async (t) => {
  const pg = await postgresOrSkip(t, { dedicated: true });
  if (!pg) return;
  await migrateStore(pg.url, {}, VERSION);
  const options = { dataDir: '/nonexistent', config: parseConfig('{}', 'estate.config.json'), env: {} };
  const reader = await openPostgresStore(pg.url, options);
  t.after(() => reader.close());
  const unsubscribe = await reader.completions.subscribe(() => {}, () => {});
  // Asked on a connection of its own; one refused while the server comes back up is asked again.
  const listening = async () => {
    try {
      return Number((await query(pg, "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'estate' AND query LIKE 'LISTEN %'"))[0]?.n) > 0;
    } catch {
      return false;
    }
  };
  await waitUntil('the subscriber listens', listening);
  // A few polls while the LISTEN is live: each checks it, with nothing to do.
  await new Promise((resolve) => setTimeout(resolve, 2500));
  await pg.halt();
  await pg.resume();
  await waitUntil('the subscriber listens again after the restart', listening);
  await unsubscribe();
});
