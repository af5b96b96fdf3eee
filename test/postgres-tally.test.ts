import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import postgres from 'postgres';
import { parseConfig } from '../src/config.ts';
import type { JsonRecord } from '../src/core/jsonl/parse-record.ts';
import { createDataDirStore } from '../src/core/store/data-dir-store.ts';
import { openStore } from '../src/core/store/open-store.ts';
import { migrate } from '../src/core/store/postgres/migrate.ts';
import { MIGRATIONS, SCHEMA_VERSION } from '../src/core/store/postgres/migrations.ts';
import type { Store } from '../src/core/store/store.ts';
import { VERSION } from '../src/version.ts';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { versionsAfter } from './helpers/postgres-store.ts';
import { startPostgres, type TestPostgres } from './helpers/postgres.ts';
import { createKeyWithCli, replicaPostgres, startReplicas } from './helpers/replicas.ts';
import { waitUntil } from './helpers/wait-until.ts';

// PostgreSQL's aggregates come from counts a trigger keeps in each write's
// transaction (migration 2), not from a scan per request: here they answer
// what the data dir's index answers for the same records, at cutoffs that
// fall in the same second, minute, hour and day as records; after `estate
// migrate` counted the rows an older schema already held; and through two
// replicas writing at once. What a replica keeps (feeds, tallies) gives way
// to another replica's write once its notification arrives.

const config = parseConfig('{}', 'estate.config.json');
const BASE = Date.parse('2026-03-10T12:34:56.789Z');
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Offsets from BASE of the records' times: in the same second, minute, hour and day as BASE, and across each boundary. */
const OFFSETS = [0, 1, -1, 210, -789, 211, SECOND, -SECOND, 3 * SECOND, MINUTE, -MINUTE, 2 * MINUTE + 7, HOUR, -HOUR, 5 * HOUR, DAY, -DAY, 3 * DAY, -30 * DAY, -400 * DAY];
const ASSIGNEES = ['ana', 'bo', 'cy', ''];
const BOARDS = ['ops', 'infra', 'garden'];

/** Completions made elsewhere (own ids and times), written out of time order. */
function records(prefix: string, count: number): JsonRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `wc_${prefix}${i.toString(16).padStart(14, '0')}`,
    task_id: `${prefix}-${i}`,
    board: BOARDS[(i * 7) % BOARDS.length] as string,
    assignee: ASSIGNEES[(i * 5) % ASSIGNEES.length] as string,
    title: `Task ${i}`,
    completed_at: new Date(BASE + (OFFSETS[(i * 3) % OFFSETS.length] as number) + Math.floor(i / OFFSETS.length)).toISOString(),
  }));
}

/** Cutoffs at every record time and a millisecond either side, and at the dashboard's windows. */
function cutoffs(of: readonly JsonRecord[]): Date[] {
  const times = [...new Set(of.map((r) => Date.parse(r.completed_at as string)))];
  return [...times.flatMap((t) => [t - 1, t, t + 1]), BASE - DAY, BASE - 7 * DAY, BASE - 30 * DAY, 0].map((t) => new Date(t));
}

function dataDirStore(t: TestContext, dir: string): Store {
  const store = createDataDirStore(dir, config);
  t.after(() => store.close());
  return store;
}

async function postgresStore(t: TestContext, pg: TestPostgres): Promise<Store> {
  const store = openStore(pg.url, { dataDir: await tempDataDir(t), config, env: {} });
  t.after(() => store.close());
  await store.ready();
  return store;
}

/** Both stores' tallies of completions and entries at `at`, which must be the same. */
async function assertSameTally(pgStore: Store, dirStore: Store, at: Date[]): Promise<void> {
  const [pgTally, dirTally] = await Promise.all([pgStore.completions.tally(at), dirStore.completions.tally(at)]);
  const byValue = (tally: typeof pgTally) => ({ ...tally, groups: [...tally.groups].sort((a, b) => a.value.localeCompare(b.value)) });
  assert.deepEqual(byValue(pgTally), byValue(dirTally));
  assert.deepEqual(await pgStore.entries.tally(at.slice(0, 5)), await dirStore.entries.tally(at.slice(0, 5)));
}

test('PostgreSQL tallies what the data dir does, at cutoffs in the same second, minute, hour and day as records, before and after more writes', async (t) => {
  const pg = await startPostgres(t);
  if (!pg) return t.skip('PostgreSQL is not installed (apt-get install postgresql)');
  const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
  t.after(() => sql.end());
  await migrate(sql, 'test', VERSION);
  const pgStore = await postgresStore(t, pg);
  const dirStore = dataDirStore(t, await tempDataDir(t));

  const made = records('a', 120);
  for (const store of [pgStore, dirStore]) {
    // In batches, as a copy restores them (one INSERT statement each).
    for (let i = 0; i < made.length; i += 50) assert.ok((await store.completions.restore(made.slice(i, i + 50))).every((r) => r.outcome === 'created'));
  }
  const at = cutoffs(made);
  await assertSameTally(pgStore, dirStore, at);
  const tally = await pgStore.completions.tally([new Date(BASE)]);
  assert.equal(tally.count, 120);
  assert.deepEqual(tally.groups.map((g) => g.value).sort(), ['ana', 'bo', 'cy'], 'a record with an empty assignee is counted in no group');
  // Cutoffs that move as the clock does, across records and between them: a tally kept for earlier cutoffs answers only where it still holds.
  for (let now = BASE - 2 * SECOND; now <= BASE + 2 * SECOND; now += 97) await assertSameTally(pgStore, dirStore, [new Date(now), new Date(now - HOUR)]);

  // Writes one at a time, and a replay that stores nothing.
  for (const store of [pgStore, dirStore]) {
    for (let i = 0; i < 6; i++) await store.completions.write({ task_id: `W-${i}`, board: 'ops', assignee: `dee${i % 2}`, title: 'w' }, () => new Date(BASE + i * 17));
    assert.equal((await store.completions.write({ task_id: 'W-0', board: 'ops', assignee: 'dee0', title: 'w' }, () => new Date(BASE))).outcome, 'replayed');
    await store.entries.write({ title: 'e', slug: 'e', content_type: 'note', target_site: 'garden' }, () => new Date(BASE));
  }
  const pgNewest = await pgStore.completions.tally([]);
  const dee0 = pgNewest.groups.find((g) => g.value === 'dee0');
  assert.equal(dee0?.count, 3);
  assert.equal(dee0?.newest.task_id, 'W-4', 'the newest of a group is its last written');
  // The ids and times of written records differ between the stores: compare the counts of those, and all of the restored.
  const counts = (tally: typeof pgNewest) => ({ count: tally.count, since: tally.since, groups: tally.groups.map((g) => [g.value, g.count, g.since, g.distinct]).sort() });
  assert.deepEqual(counts(await pgStore.completions.tally(at)), counts(await dirStore.completions.tally(at)));
});

test('estate migrate counts the rows that a table of an older schema already holds, and the trigger counts those written after', async (t) => {
  const pg = await startPostgres(t);
  if (!pg) return t.skip('PostgreSQL is not installed (apt-get install postgresql)');
  const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
  t.after(() => sql.end());
  // Schema version 1, as estate before the counts left it, with rows stored by its INSERTs.
  await migrate(sql, 'test', VERSION, 1);
  const made = records('b', 300);
  await sql`INSERT INTO completions (id, board, task_id, record) SELECT r->>'id', r->>'board', r->>'task_id', r FROM jsonb_array_elements(${sql.json(made as unknown as postgres.JSONValue)}) AS r`;
  await sql`INSERT INTO entries (id, target_site, slug, content_type, record) VALUES ('pub_0000000000000001', 'garden', 'old', 'note', ${sql.json({ entry_id: 'pub_0000000000000001', title: 'Old', slug: 'old', content_type: 'note', target_site: 'garden', registered_at: new Date(BASE - DAY).toISOString() })})`;

  const dir = await tempDataDir(t);
  const migrated = await runEstate(['migrate', '--json', '--store', pg.url, '--data-dir', dir]);
  assert.equal(migrated.code, 0, migrated.stderr);
  assert.deepEqual([migrated.json.from, migrated.json.to, migrated.json.applied.map((m: { version: number }) => m.version)], [1, SCHEMA_VERSION, versionsAfter(1)]);

  const pgStore = await postgresStore(t, pg);
  const dirStore = dataDirStore(t, await tempDataDir(t));
  assert.ok((await dirStore.completions.restore(made)).every((r) => r.outcome === 'created'));
  await dirStore.entries.restore([{ entry_id: 'pub_0000000000000001', title: 'Old', slug: 'old', content_type: 'note', target_site: 'garden', registered_at: new Date(BASE - DAY).toISOString() }]);
  const at = cutoffs(made);
  await assertSameTally(pgStore, dirStore, at);

  // Written after the migration: counted once, by the trigger.
  const more = records('c', 40);
  for (const store of [pgStore, dirStore]) await store.completions.restore(more);
  await assertSameTally(pgStore, dirStore, cutoffs([...made, ...more]));
  assert.equal((await pgStore.completions.tally([])).count, 340);
});

test('two replicas writing at once: each answers the same exact aggregates, and what each keeps gives way to the other\'s writes', { timeout: 60_000 }, async (t) => {
  const pg = await replicaPostgres(t);
  if (!pg) return;
  const [a, b] = await startReplicas(t, pg, 2);
  assert.ok(a && b);
  const { key } = await createKeyWithCli(pg, await tempDataDir(t), 'alice');
  const agents = ['ana', 'bo', 'cy'];
  const writes = Array.from({ length: 60 }, (_, i) =>
    (i % 2 ? a : b).request('POST', '/work/complete', { key, body: { task_id: `R-${i}`, board: `board-${i % 4}`, assignee: agents[i % 3], title: `Task ${i}` } }),
  );
  for (const r of await Promise.all(writes)) assert.equal(r.status, 201, r.text);

  const expected = agents.map((name, n) => {
    const mine = Array.from({ length: 60 }, (_, i) => i).filter((i) => i % 3 === n);
    return { name, completions: 20, completions_24h: 20, completions_7d: 20, boards: [...new Set(mine.map((i) => `board-${i % 4}`))].sort() };
  });
  const shape = (items: { name: string; completions: number; completions_24h: number; completions_7d: number; boards: string[] }[]) =>
    items.map(({ name, completions, completions_24h, completions_7d, boards }) => ({ name, completions, completions_24h, completions_7d, boards })).sort((x, y) => x.name.localeCompare(y.name));
  const feed = await a.request('GET', '/work/feed?limit=100');
  for (const replica of [a, b]) {
    const list = await replica.request('GET', '/estate/agents');
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(shape(list.json.items), expected);
    assert.equal(list.json.window.records, 60);
    const newestOf = (name: string) => feed.json.items.find((r: JsonRecord) => r.assignee === name);
    for (const item of list.json.items) assert.equal(item.last_task.task_id, newestOf(item.name).task_id, `${item.name}'s newest`);
    const summary = await replica.request('GET', '/summary', { key });
    assert.equal(summary.json.work.last_24h, 60);
    assert.equal(summary.json.work.latest.task_id, feed.json.items[0].task_id);
  }

  // Each replica keeps what it read (it listens for the log's notifications from its third read):
  // a write through one is in the other's next reads once its notification arrived, and in its own at once.
  const paths = ['/work/feed', '/work/feed?board=board-1', '/work/feed?limit=1'];
  for (const [writer, reader] of [[a, b], [b, a]] as const) {
    for (let i = 0; i < 5; i++) for (const path of paths) assert.equal((await reader.request('GET', path)).status, 200);
    for (let i = 0; i < 5; i++) assert.equal((await reader.request('GET', '/estate/agents')).status, 200);
    const task: string = `N-${writer === a ? 'a' : 'b'}`;
    const created = await writer.request('POST', '/work/complete', { key, body: { task_id: task, board: 'board-1', assignee: 'dee', title: 'New' } });
    assert.equal(created.status, 201, created.text);
    for (const path of paths) assert.equal((await writer.request('GET', path)).json.items[0]?.task_id, task, `${path} on the writing replica`);
    assert.equal((await writer.request('GET', '/estate/agents')).json.items[0]?.name, 'dee');
    for (const path of paths) {
      await waitUntil(`${task} first in ${path} on the other replica`, async () => (await reader.request('GET', path)).json.items[0]?.task_id === task);
    }
    await waitUntil(`${task} counted in /estate/agents on the other replica`, async () => {
      const dee = (await reader.request('GET', '/estate/agents')).json.items.find((x: { name: string }) => x.name === 'dee');
      return dee?.completions === (writer === a ? 1 : 2);
    });
  }
  const [fromA, fromB] = await Promise.all([a.request('GET', '/estate/agents'), b.request('GET', '/estate/agents')]);
  assert.deepEqual(shape(fromA.json.items), shape(fromB.json.items));
  assert.equal(fromA.json.window.records, 62);
});
