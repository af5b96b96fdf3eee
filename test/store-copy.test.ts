import assert from 'node:assert/strict';
import { appendFile, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { parseConfig } from '../src/config.ts';
import { createDataDirStore } from '../src/core/store/data-dir-store.ts';
import type { JsonRecord } from '../src/core/jsonl/parse-record.ts';
import { openStore } from '../src/core/store/open-store.ts';
import type { SeriesSample, Store } from '../src/core/store/store.ts';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { startPostgres, type TestPostgres } from './helpers/postgres.ts';
import { startServer } from './helpers/server.ts';
import { waitUntil } from './helpers/wait-until.ts';
import { eventRecord } from '../src/core/events/stored-events.ts';

// `estate store copy` through the real CLI, between real data dirs and a real
// PostgreSQL (test/helpers/postgres.ts): every record field for field and in
// order, idempotent, conflicts reported and never overwritten, and keys and
// tokens made before the copy still good against the destination.

const LIMITS = { maxRunsPerUser: 100, maxParamsBytes: 65_536 };
/** More completions than one page of the copy (1000), so paging is crossed. */
const COMPLETIONS = 1234;
const KINDS = ['completions', 'starts', 'events', 'entries', 'training_runs', 'api_keys', 'token_secret'] as const;

async function postgresOrSkip(t: TestContext): Promise<TestPostgres | undefined> {
  const pg = await startPostgres(t);
  if (!pg) t.skip('PostgreSQL is not installed (apt-get install postgresql)');
  return pg;
}

/** A PostgreSQL database with estate's schema, as `estate migrate` makes it. */
async function migratedPostgres(t: TestContext): Promise<TestPostgres | undefined> {
  const pg = await postgresOrSkip(t);
  if (!pg) return undefined;
  const migrated = await runEstate(['migrate', '--store', pg.url, '--data-dir', await tempDataDir(t)]);
  assert.equal(migrated.code, 0, migrated.stderr);
  return pg;
}

function openDataDir(t: TestContext, dir: string): Store {
  const store = createDataDirStore(dir, parseConfig('{}', 'estate.config.json'));
  t.after(() => store.close());
  return store;
}

/** An estate with some of everything: completions on two boards, entries, runs of two users, three keys (one revoked, one used), a token secret. */
async function fillEstate(t: TestContext, dir: string): Promise<{ key: string; revokedKey: string; token: string; runId: string }> {
  const store = openDataDir(t, dir);
  let clock = Date.parse('2025-03-01T08:00:00.000Z');
  const now = () => new Date((clock += 1000));
  const writes = [];
  for (let i = 0; i < COMPLETIONS; i++) {
    const summary = i % 3 === 0 ? { summary: `done ${i} — ✓` } : {};
    writes.push(store.completions.write({ task_id: `T-${i}`, board: i % 2 ? 'ops' : 'web', assignee: 'ana', title: `task ${i}`, ...summary }, now));
  }
  for (let i = 0; i < 5; i++) {
    writes.push(store.entries.write({ title: `post ${i}`, slug: `post-${i}`, content_type: i % 2 ? 'note' : 'article', target_site: 'blog', url: `https://blog.example/${i}` }, now));
  }
  for (const w of await Promise.all(writes)) assert.equal(w.outcome, 'created');
  // Three runs started; the first completed, so its completion carries its start and duration.
  for (let i = 0; i < 3; i++) assert.equal((await store.starts.write({ task_id: `run-${i}`, board: 'ops', ...(i ? { assignee: 'cron' } : {}) }, now)).outcome, 'created');
  const started = (await store.starts.byKey(['ops', 'run-0'])) as JsonRecord;
  const timing = (time: Date) => ({ started_at: started.started_at, duration_s: (time.getTime() - Date.parse(String(started.started_at))) / 1000 });
  assert.equal((await store.completions.write({ task_id: 'run-0', board: 'ops', assignee: 'cron', title: 'run 0' }, now, timing)).record.duration_s, 3);
  // Two watched events, as estate serve's recorder stores them.
  for (const [kind, subject] of [['node_stale', 'web-1'], ['pulse_degraded', 'web-2']] as const) {
    const event = { ts: now().toISOString(), kind, source: kind === 'node_stale' ? ('heartbeat' as const) : ('pulse' as const), subject, message: `${subject}: ${kind}` };
    assert.equal((await store.events.write(eventRecord(event), now)).outcome, 'created');
  }
  const run = await store.training.create('alice', { name: 'first', model: 'small', params: { lr: 0.1, epochs: 3, layers: [64, 32] } }, LIMITS, now());
  await store.training.create('bob', { dataset: 'logs' }, LIMITS, now());
  const key = await store.credentials.create({ userId: 'alice', name: 'laptop' });
  await store.credentials.touch(key.info.key_id, now());
  const revoked = await store.credentials.create({ userId: 'alice', name: 'old' });
  await store.credentials.revoke(revoked.info.key_id, now());
  await store.credentials.create({ userId: 'cron', scopes: ['write'], expiresAt: new Date(Date.now() + 90 * 86_400_000) });
  const token = await runEstate(['token', 'create', '--user', 'alice', '--ttl', '7d', '--json', '--data-dir', dir]);
  assert.equal(token.code, 0, token.stderr);
  return { key: key.key, revokedKey: revoked.key, token: token.json.token, runId: run.run_id };
}

/** What a data dir's store holds, as files: the logs' text, the runs, the keys, the token secret. */
async function estateFiles(dir: string) {
  const text = (file: string) => readFile(path.join(dir, file), 'utf8');
  const runNames = (await readdir(path.join(dir, 'training', 'runs'))).filter((n) => n.endsWith('.json')).sort();
  const runs = Object.fromEntries(await Promise.all(runNames.map(async (n) => [n, JSON.parse(await text(`training/runs/${n}`))])));
  return {
    completions: await text('work/completions.jsonl'),
    starts: await text('work/starts.jsonl'),
    events: await text('events/watched.jsonl'),
    entries: await text('publishing/entries.jsonl'),
    runs,
    keys: JSON.parse(await text('keys.json')).keys,
    tokenSecret: await text('token-secret'),
  };
}

async function copy(from: string, to: string, env: Record<string, string> = {}) {
  return runEstate(['store', 'copy', '--from', from, '--to', to, '--json'], { env, timeoutMs: 60_000 });
}

const counts = (json: Record<string, { copied: number; already_there: number; conflicts: number }>) =>
  Object.fromEntries(KINDS.map((k) => [k, [json[k]?.copied, json[k]?.already_there, json[k]?.conflicts]]));

test('a data dir copied to PostgreSQL and on to a new data dir keeps every record field for field and in order; a second run copies nothing', async (t) => {
  const pg = await migratedPostgres(t);
  if (!pg) return;
  const source = await tempDataDir(t);
  await fillEstate(t, source);
  const before = await estateFiles(source);

  const toPostgres = await copy(source, pg.urlWithoutPassword, { PGPASSWORD: pg.password });
  assert.equal(toPostgres.code, 0, toPostgres.stderr);
  assert.deepEqual(counts(toPostgres.json), {
    completions: [COMPLETIONS + 1, 0, 0],
    starts: [3, 0, 0],
    events: [2, 0, 0],
    entries: [5, 0, 0],
    training_runs: [2, 0, 0],
    api_keys: [3, 0, 0],
    token_secret: [1, 0, 0],
  });
  assert.equal(toPostgres.json.from, source);
  assert.equal(toPostgres.json.to, `postgres://postgres@127.0.0.1:${pg.port}/${pg.database}`);
  assert.match(toPostgres.stderr, new RegExp(`^completions: +${COMPLETIONS + 1} copied, 0 already there, 0 conflicts$`, 'm'));
  assert.ok(!toPostgres.stdout.includes(pg.password) && !toPostgres.stderr.includes(pg.password), 'the password is never shown');

  // PostgreSQL answers the feed as the data dir did: same records, same order, newest first.
  for (const args of [['work', 'feed', '--limit', '1000'], ['work', 'feed', '--board', 'ops', '--limit', '7'], ['publish', 'latest', '--limit', '10']]) {
    const fromDir = await runEstate([...args, '--json', '--data-dir', source]);
    const fromPg = await runEstate([...args, '--json', '--data-dir', source, '--store', pg.url]);
    assert.equal(fromPg.code, 0, fromPg.stderr);
    assert.deepEqual(fromPg.json, fromDir.json, args.join(' '));
  }

  const again = await copy(source, pg.url);
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(counts(again.json), {
    completions: [0, COMPLETIONS + 1, 0],
    starts: [0, 3, 0],
    events: [0, 2, 0],
    entries: [0, 5, 0],
    training_runs: [0, 2, 0],
    api_keys: [0, 3, 0],
    token_secret: [0, 1, 0],
  });

  const target = await tempDataDir(t);
  const back = await copy(pg.url, target);
  assert.equal(back.code, 0, back.stderr);
  assert.deepEqual(counts(back.json), counts(toPostgres.json));
  const after = await estateFiles(target);
  // The logs byte for byte: every id, time and field, in the same order.
  assert.equal(after.completions, before.completions);
  assert.equal(after.starts, before.starts);
  assert.equal(after.events, before.events);
  assert.equal(after.entries, before.entries);
  assert.deepEqual(after.runs, before.runs);
  assert.deepEqual(after.keys, before.keys);
  assert.equal(after.tokenSecret, before.tokenSecret);

  const backAgain = await copy(pg.url, target);
  assert.equal(backAgain.code, 0, backAgain.stderr);
  assert.deepEqual(counts(backAgain.json), counts(again.json));
  assert.deepEqual(await estateFiles(target), after, 'a second copy changes nothing');
});

test('a key, a token and a training run made before the copy work against a server on the destination store; a revoked key stays revoked', async (t) => {
  const pg = await migratedPostgres(t);
  if (!pg) return;
  const source = await tempDataDir(t);
  const made = await fillEstate(t, source);
  const copied = await copy(source, pg.url);
  assert.equal(copied.code, 0, copied.stderr);

  const server = await startServer(t, await tempDataDir(t), { env: { ESTATE_STORE: pg.url } });
  assert.equal(server.ctx.store.kind, 'postgres');
  for (const [name, headers] of [
    ['API key', { 'X-API-Key': made.key }],
    ['token', { Authorization: `Bearer ${made.token}` }],
  ] as const) {
    const runs = await server.get('/training/runs', headers);
    assert.equal(runs.status, 200, `${name}: ${runs.text}`);
    assert.deepEqual(
      runs.json.map((r: { run_id: string }) => r.run_id),
      [made.runId],
      name,
    );
  }
  assert.equal((await server.get('/training/runs', { 'X-API-Key': made.revokedKey })).status, 403, 'the revoked key');
  const forged = `${made.token.slice(0, -4)}AAAA`;
  assert.equal((await server.get('/training/runs', { Authorization: `Bearer ${forged}` })).status, 403, 'a token with a bad signature');

  // Revoked at the source after the copy: a second copy carries the revocation over.
  const keyId = /^est_([0-9a-f]{12})_/.exec(made.key)?.[1] as string;
  assert.equal((await runEstate(['keys', 'revoke', keyId, '--data-dir', source])).code, 0);
  const again = await copy(source, pg.url);
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual([again.json.api_keys.updated, again.json.api_keys.already_there, again.json.api_keys.copied], [1, 2, 0]);
  assert.match(again.stderr, /^api_keys: +0 copied, 2 already there, 1 updated, 0 conflicts$/m);
  await waitUntil('the destination refuses the key revoked at the source', async () => (await server.get('/training/runs', { 'X-API-Key': made.key })).status === 403);
  const listed = await runEstate(['keys', 'list', '--json', '--data-dir', source, '--store', pg.url]);
  const sourceKeys = (await runEstate(['keys', 'list', '--json', '--data-dir', source])).json.items;
  const revokedAt = sourceKeys.find((k: { key_id: string }) => k.key_id === keyId).revoked_at;
  assert.match(revokedAt, /^\d{4}-/);
  assert.equal(listed.json.items.find((k: { key_id: string }) => k.key_id === keyId).revoked_at, revokedAt, 'revoked at the time of the source');
});

test('a conflict exits 5, is reported, and overwrites nothing; everything else is copied, and a second run copies nothing more', async (t) => {
  const pg = await migratedPostgres(t);
  if (!pg) return;
  const source = await tempDataDir(t);
  const src = openDataDir(t, source);
  const at = () => new Date('2025-04-01T10:00:00.000Z');
  const mine = await src.completions.write({ task_id: 'T-1', board: 'ops', assignee: 'ana', title: 'the source title' }, at);
  const other = await src.completions.write({ task_id: 'T-2', board: 'ops', assignee: 'ana', title: 'no conflict' }, at);
  assert.equal((await runEstate(['token', 'create', '--user', 'alice', '--data-dir', source])).code, 0);
  // A corrupt line in the source: not a record, not copied, counted.
  await appendFile(path.join(source, 'work', 'completions.jsonl'), '{"torn": \n');
  // A run file that is not a run: not copied either, counted.
  await mkdir(path.join(source, 'training', 'runs'), { recursive: true });
  await writeFile(path.join(source, 'training', 'runs', 'run_00000000000000ff.json'), '{"run_id": ', { mode: 0o600 });

  // The destination already holds (ops, T-1) with another title, and a token secret of its own.
  const dir = await tempDataDir(t);
  const theirs = await runEstate(['work', 'complete', '--task-id', 'T-1', '--board', 'ops', '--assignee', 'bo', '--title', 'the destination title', '--json', '--data-dir', dir, '--store', pg.url]);
  assert.equal(theirs.code, 0, theirs.stderr);
  assert.equal((await runEstate(['token', 'create', '--user', 'bo', '--data-dir', dir, '--store', pg.url])).code, 0);

  const r = await copy(source, pg.url);
  assert.equal(r.code, 5, r.stderr);
  assert.deepEqual(counts(r.json), {
    completions: [1, 0, 1],
    starts: [0, 0, 0],
    events: [0, 0, 0],
    entries: [0, 0, 0],
    training_runs: [0, 0, 0],
    api_keys: [0, 0, 0],
    token_secret: [0, 0, 1],
  });
  assert.equal(r.json.completions.skipped, 1);
  assert.equal(r.json.training_runs.skipped, 1);
  assert.deepEqual(r.json.conflicts, [
    { kind: 'completions', id: mine.record.id, key: { board: 'ops', task_id: 'T-1' }, differing: ['id', 'assignee', 'title', 'completed_at'] },
    { kind: 'token_secret', id: 'token secret', differing: ['secret'] },
  ]);
  assert.match(r.stderr, new RegExp(`^conflict: completions ${mine.record.id} \\(board ops, task_id T-1\\): .*title.*; left as it is$`, 'm'));
  assert.match(r.stderr, /^completions: +1 copied, 0 already there, 1 conflict, 1 skipped \(not records\)$/m);
  assert.match(r.stderr, /^training_runs: +0 copied, 0 already there, 0 conflicts, 1 skipped \(not records\)$/m);
  assert.match(r.stderr, /^estate: 2 conflicts: nothing was overwritten/m);

  const feed = await runEstate(['work', 'feed', '--json', '--data-dir', dir, '--store', pg.url]);
  assert.deepEqual(feed.json.items, [other.record, theirs.json], 'the destination keeps its own T-1; T-2 is copied as it was');
  const theirToken = await runEstate(['token', 'create', '--user', 'bo', '--json', '--data-dir', dir, '--store', pg.url]);
  const server = await startServer(t, dir, { env: { ESTATE_STORE: pg.url } });
  assert.equal((await server.get('/training/runs', { Authorization: `Bearer ${theirToken.json.token}` })).status, 200, "the destination's own secret still signs");

  const again = await copy(source, pg.url);
  assert.equal(again.code, 5, again.stderr);
  assert.deepEqual(counts(again.json).completions, [0, 1, 1]);
});

test('a record whose id another record holds at the destination is a conflict, never a second record with that id (data dir and PostgreSQL)', async (t) => {
  for (const kind of ['data dir', 'postgres'] as const) {
    await t.test(kind, async (t) => {
      const source = await tempDataDir(t);
      const src = openDataDir(t, source);
      const at = () => new Date('2025-04-01T10:00:00.000Z');
      const first = await src.completions.write({ task_id: 'T-1', board: 'ops', assignee: 'ana', title: 'one' }, at);
      await src.completions.write({ task_id: 'T-2', board: 'ops', assignee: 'ana', title: 'two' }, at);

      // The destination holds a record with T-1's id under another key (T-9).
      const squatted = await tempDataDir(t);
      await appendFile(path.join(squatted, 'work', 'completions.jsonl'), `${JSON.stringify({ ...first.record, task_id: 'T-9' })}\n`);
      let target = squatted;
      if (kind === 'postgres') {
        const pg = await migratedPostgres(t);
        if (!pg) return;
        target = pg.url;
        assert.equal((await copy(squatted, target)).code, 0);
      }
      const r = await copy(source, target);
      assert.equal(r.code, 5, r.stderr);
      assert.deepEqual(counts(r.json).completions, [1, 0, 1]);
      assert.deepEqual(r.json.conflicts[0], { kind: 'completions', id: first.record.id, key: { board: 'ops', task_id: 'T-1' }, differing: ['task_id'] });
      const feed = await runEstate(['work', 'feed', '--json', '--data-dir', squatted, ...(kind === 'postgres' ? ['--store', target] : [])]);
      assert.deepEqual(
        feed.json.items.map((c: { id: string; task_id: string }) => [c.id === first.record.id, c.task_id]),
        [
          [false, 'T-2'],
          [true, 'T-9'],
        ],
      );
    });
  }
});

test('estate store copy refuses what it cannot copy with exit 2 and one line: a missing data dir, the same store twice, an unmigrated database, another kind of URL', async (t) => {
  const dir = await tempDataDir(t);
  const cases: [string, string[], RegExp][] = [
    ['missing --to', ['--from', dir], /^estate: missing --to\n$/],
    ['missing data dir', ['--from', dir, '--to', path.join(dir, 'nope')], /data directory .*nope does not exist \(create it with: estate init /],
    ['the same store', ['--from', dir, '--to', `${dir}/.`], /--from and --to name the same store/],
    ['another kind of URL', ['--from', dir, '--to', 'mysql://root:hunter2@db/estate'], /--to: invalid store "mysql:\/\/root@db\/estate": use a data directory or a postgres:\/\/ URL/],
  ];
  const pg = await startPostgres(t);
  if (pg) cases.push(['an unmigrated database', ['--from', dir, '--to', pg.url], /has no estate schema yet; this estate needs version \d+: run estate migrate/]);
  for (const [name, args, message] of cases) {
    const r = await runEstate(['store', 'copy', ...args]);
    assert.equal(r.code, 2, `${name}: ${r.stderr}`);
    assert.match(r.stderr, message, name);
    assert.equal(r.stderr.trim().split('\n').filter((l) => !l.startsWith('(run with')).length, 1, `${name}: one line: ${r.stderr}`);
    assert.equal(r.stdout, '', name);
    assert.ok(!r.stderr.includes('hunter2') && !(pg && r.stderr.includes(pg.password)), `${name}: no password`);
  }
});

/** A migrated PostgreSQL store, open in this process (closed after the test). */
async function openPostgres(t: TestContext, pg: TestPostgres): Promise<Store> {
  const store = openStore(pg.url, { dataDir: await tempDataDir(t), config: parseConfig('{}', 'estate.config.json'), env: {} });
  t.after(() => store.close());
  await store.ready();
  return store;
}

const SERIES_KINDS = ['trends', 'disk', 'pulse', 'heartbeat'] as const;
const seriesCounts = (json: Record<string, { copied: number; already_there: number; conflicts: number; skipped: number }>) =>
  Object.fromEntries(SERIES_KINDS.map((k) => [k, [json[k]?.copied, json[k]?.already_there, json[k]?.conflicts, json[k]?.skipped]]));

/** A sample of `node` at second `i` of the day, with two file systems. */
function seriesSample(node: string, i: number): SeriesSample {
  const ts = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
  return {
    trend: { ts, node, cpu_pct: i, load1: 0.5 },
    disks: ['/', '/data'].map((mount) => ({ ts, node, mount, fs_type: 'ext4', total_bytes: 1000, used_bytes: i, free_bytes: 1000 - i })),
    pulse: { ts, node, status: i % 2 ? 'healthy' : 'degraded', checks: { memory: { status: 'healthy', value: i } } },
  };
}

/** Every record of every series of a store, oldest first. */
async function allSeries(store: Store): Promise<Record<string, JsonRecord[]>> {
  const all: Record<string, JsonRecord[]> = {};
  for (const series of ['trends', 'disk', 'pulse'] as const) {
    all[series] = [];
    for await (const page of store.series.pages(series, 100)) all[series].push(...page.records);
  }
  return all;
}

test('the series and the heartbeat are copied between PostgreSQL stores both ways, each record once; a second copy finds everything there', { timeout: 120_000 }, async (t) => {
  const [one, two] = [await migratedPostgres(t), await migratedPostgres(t)];
  if (!one || !two) return;
  const [first, second] = [await openPostgres(t, one), await openPostgres(t, two)];
  // The first: a hub with nodes a and b (more records than one page of the copy), a record of another tool without node, and a heartbeat with a field of its own.
  const samples = Array.from({ length: 1200 }, (_, i) => seriesSample(i % 3 ? 'a' : 'b', i));
  for (let i = 0; i < samples.length; i += 500) await first.series.ingest(samples.slice(i, i + 500));
  assert.deepEqual(await first.series.restore('trends', [{ ts: '2026-01-02T00:00:00Z', load: 3 }]), { created: 1, present: 0 });
  await first.series.mergeHeartbeat({ name: 'a', last_seen: '2026-01-03T00:00:00.000Z', status: 'healthy' });
  // The second: node c's own collector, no heartbeat yet.
  for (let i = 0; i < 5; i++) await second.series.appendSample(seriesSample('c', i));

  const there = await copy(one.url, two.url);
  assert.equal(there.code, 0, there.stderr);
  assert.deepEqual(seriesCounts(there.json), { trends: [1201, 0, 0, 0], disk: [2400, 0, 0, 0], pulse: [1200, 0, 0, 0], heartbeat: [1, 0, 0, 0] });
  assert.match(there.stderr, /^trends: +1201 copied, 0 already there, 0 conflicts$/m);
  assert.match(there.stderr, /^heartbeat: +1 copied, 0 already there, 0 conflicts$/m);
  const again = await copy(one.url, two.url);
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(seriesCounts(again.json), { trends: [0, 1201, 0, 0], disk: [0, 2400, 0, 0], pulse: [0, 1200, 0, 0], heartbeat: [0, 1, 0, 0] });

  const back = await copy(two.url, one.url);
  assert.equal(back.code, 0, back.stderr);
  assert.deepEqual(seriesCounts(back.json), { trends: [5, 1201, 0, 0], disk: [10, 2400, 0, 0], pulse: [5, 1200, 0, 0], heartbeat: [0, 1, 0, 0] });

  // Both hold every record once, field for field; each store's own first, then the other's in their order.
  const [a, b] = [await allSeries(first), await allSeries(second)];
  for (const series of ['trends', 'disk', 'pulse']) {
    const key = (r: JsonRecord) => JSON.stringify(r);
    assert.deepEqual(a[series]?.map(key).sort(), b[series]?.map(key).sort(), series);
    assert.equal(new Set(a[series]?.map(key)).size, a[series]?.length, `${series}: no record twice`);
  }
  assert.deepEqual(b.trends?.slice(0, 5).map((r) => r.node), ['c', 'c', 'c', 'c', 'c']);
  assert.deepEqual(b.trends?.slice(5), a.trends?.slice(0, 1201), 'copied in the order of the source');
  assert.deepEqual(await second.series.nodes(), ['a', 'b', 'c']);
  assert.deepEqual((await second.series.newest('pulse', 1, { node: 'b' })).items, [samples[1197]?.pulse]);
  assert.deepEqual((await second.series.heartbeat()).data, (await first.series.heartbeat()).data);

  // A heartbeat that differs at the destination is a conflict, left as it is.
  await second.series.mergeHeartbeat({ name: 'c', last_seen: '2026-01-04T00:00:00.000Z', status: 'healthy' });
  const conflicting = await copy(two.url, one.url);
  assert.equal(conflicting.code, 5, conflicting.stderr);
  assert.deepEqual(conflicting.json.conflicts, [{ kind: 'heartbeat', id: 'heartbeat', differing: ['nodes'] }]);
  assert.match(conflicting.stderr, /^conflict: heartbeat heartbeat: the destination holds another one \(nodes differ\); left as it is$/m);
  assert.deepEqual(((await first.series.heartbeat()).data as { nodes: { name: string }[] }).nodes.map((n) => n.name).sort(), ['a', 'b']);
});

test("a data dir's series files and heartbeat copied to PostgreSQL and back to a new data dir: every record once, field for field, in order; a second copy finds everything there", { timeout: 120_000 }, async (t) => {
  const pg = await migratedPostgres(t);
  if (!pg) return;
  const source = await tempDataDir(t);
  // As the collector and other tools leave them: lines with and without node, an older tool's fields, a torn last line.
  const trends = [
    { ts: '2025-12-31T23:59:00Z', cpu: 12, host: 'legacy' },
    ...Array.from({ length: 30 }, (_, i) => seriesSample(i % 2 ? 'a' : 'b', i).trend),
  ];
  const disks = Array.from({ length: 30 }, (_, i) => seriesSample(i % 2 ? 'a' : 'b', i).disks).flat();
  const pulses = Array.from({ length: 30 }, (_, i) => seriesSample(i % 2 ? 'a' : 'b', i).pulse);
  const lines = (records: object[]) => records.map((r) => `${JSON.stringify(r)}\n`).join('');
  await writeFile(path.join(source, 'trends.jsonl'), `${lines(trends)}{"ts": "2026-01-0`);
  await writeFile(path.join(source, 'disk.jsonl'), lines(disks));
  await writeFile(path.join(source, 'health-pulse.jsonl'), lines(pulses));
  const heartbeat = { nodes: [{ name: 'a', last_seen: '2026-01-01T00:00:29.000Z', status: 'healthy', rack: 'r1' }], site: 'lab' };
  await writeFile(path.join(source, 'state', 'heartbeat.json'), JSON.stringify(heartbeat));

  const there = await copy(source, pg.url);
  assert.equal(there.code, 0, there.stderr);
  assert.deepEqual(seriesCounts(there.json), { trends: [31, 0, 0, 1], disk: [60, 0, 0, 0], pulse: [30, 0, 0, 0], heartbeat: [1, 0, 0, 0] });
  const again = await copy(source, pg.url);
  assert.deepEqual(seriesCounts(again.json), { trends: [0, 31, 0, 1], disk: [0, 60, 0, 0], pulse: [0, 30, 0, 0], heartbeat: [0, 1, 0, 0] });
  const store = await openPostgres(t, pg);
  assert.deepEqual(await allSeries(store), { trends, disk: disks, pulse: pulses });
  assert.deepEqual((await store.series.newest('trends', 2, { node: 'b' })).items, [trends[29], trends[27]]);

  const back = await tempDataDir(t);
  const home = await copy(pg.url, back);
  assert.equal(home.code, 0, home.stderr);
  assert.deepEqual(seriesCounts(home.json), { trends: [31, 0, 0, 0], disk: [60, 0, 0, 0], pulse: [30, 0, 0, 0], heartbeat: [1, 0, 0, 0] });
  const read = async (file: string) => (await readFile(path.join(back, file), 'utf8')).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
  assert.deepEqual([await read('trends.jsonl'), await read('disk.jsonl'), await read('health-pulse.jsonl')], [trends, disks, pulses]);
  assert.deepEqual(JSON.parse(await readFile(path.join(back, 'state', 'heartbeat.json'), 'utf8')), heartbeat);
  const homeAgain = await copy(pg.url, back);
  assert.deepEqual(seriesCounts(homeAgain.json).disk, [0, 60, 0, 0]);
  assert.deepEqual(seriesCounts(homeAgain.json).pulse, [0, 30, 0, 0]);
  assert.deepEqual(seriesCounts(homeAgain.json).heartbeat, [0, 1, 0, 0]);
  // The other tool's line (no node) too: found there by its content.
  assert.deepEqual(seriesCounts(homeAgain.json).trends, [0, 31, 0, 0]);
});

test("a second copy into a data dir finds other tools' records (no node) there, as PostgreSQL does", async (t) => {
  const other = { ts: '2025-12-31T23:59:00Z', cpu: 12 };
  const source = await tempDataDir(t);
  // Another tool's record twice (one record, as in PostgreSQL), a sample, and the same fields in another order (another record).
  await writeFile(path.join(source, 'trends.jsonl'), [other, seriesSample('a', 1).trend, other, { cpu: 12, ts: other.ts }].map((r) => `${JSON.stringify(r)}\n`).join(''));
  const target = await tempDataDir(t);
  // The destination holds `other` already, as that tool spaced it: the same record.
  await writeFile(path.join(target, 'trends.jsonl'), '{"ts": "2025-12-31T23:59:00Z", "cpu": 12.0}\n');
  assert.deepEqual(seriesCounts((await copy(source, target)).json).trends, [2, 2, 0, 0]);
  assert.deepEqual(seriesCounts((await copy(source, target)).json).trends, [0, 4, 0, 0]);
  const lines = (await readFile(path.join(target, 'trends.jsonl'), 'utf8')).split('\n').filter((l) => l !== '');
  assert.deepEqual(lines.slice(1).map((l) => JSON.parse(l)), [seriesSample('a', 1).trend, { cpu: 12, ts: other.ts }]);
});

/** Bytes this process has read through read(2) and pread(2) so far (Linux's /proc/self/io `rchar`), or undefined elsewhere. */
async function bytesRead(): Promise<number | undefined> {
  const io = await readFile('/proc/self/io', 'utf8').catch(() => undefined);
  const found = io?.match(/^rchar: (\d+)$/m)?.[1];
  return found === undefined ? undefined : Number(found);
}

test("a copy page by page into a data dir reads the destination's log once, not once a page, for other tools' records too (bytes read counted by the kernel)", async (t) => {
  if ((await bytesRead()) === undefined) return t.skip('no /proc/self/io to count the bytes read (Linux only)');
  const target = await tempDataDir(t);
  const file = path.join(target, 'trends.jsonl');
  // The destination: 20,000 records, half of them another tool's (no node).
  const held = Array.from({ length: 20_000 }, (_, i) => (i % 2 ? seriesSample('h', i).trend : { ts: new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString(), cpu: i, tool: 'held' }));
  await writeFile(file, held.map((r) => `${JSON.stringify(r)}\n`).join(''));
  const heldBytes = (await stat(file)).size;
  // What the copy brings: 20 pages of 100 other-tool records, as `estate store copy` hands them to restore one page at a time.
  const pages = Array.from({ length: 20 }, (_, p) => Array.from({ length: 100 }, (_, i) => ({ ts: '2026-01-01T00:00:00Z', cpu: p * 100 + i, tool: 'copied' })));
  const store = openDataDir(t, target);
  const restoreAll = async (expected: { created: number; present: number }) => {
    const before = (await bytesRead()) as number;
    for (const page of pages) assert.deepEqual(await store.series.restore('trends', page), expected);
    return ((await bytesRead()) as number) - before;
  };

  const first = await restoreAll({ created: 100, present: 0 });
  const copiedBytes = (await stat(file)).size - heldBytes;
  // The log read once (its index), and the lines appended read once more as the index catches up; a scan a page would read 20 × heldBytes.
  assert.ok(first < heldBytes + 2 * copiedBytes + 64 * 1024, `first copy read ${first} bytes; the log held ${heldBytes}, the copy appended ${copiedBytes}`);
  // Again: every record found there, by reading back only the lines the index names (the ones the first copy appended).
  const second = await restoreAll({ created: 0, present: 100 });
  assert.ok(second < 2 * copiedBytes + 64 * 1024, `second copy read ${second} bytes; the copy's lines are ${copiedBytes}, the log ${heldBytes + copiedBytes}`);
  assert.equal((await stat(file)).size, heldBytes + copiedBytes, 'the second copy appended nothing');
});

test("a data dir's restore follows its log through a prune (another file): a record pruned since the last page is stored again, never taken as there", async (t) => {
  const target = await tempDataDir(t);
  const store = openDataDir(t, target);
  const old = { ts: '2020-01-01T00:00:00.000Z', cpu: 1, tool: 'other' };
  const recent = { ts: new Date().toISOString(), cpu: 2, tool: 'other' };
  assert.deepEqual(await store.series.restore('trends', [old, recent]), { created: 2, present: 0 });
  const pruned = await runEstate(['prune', '--older-than', '30d', '--log', 'trends', '--data-dir', target]);
  assert.equal(pruned.code, 0, pruned.stderr);
  // The same Series object, its index built before the prune: the old record is gone from the new file.
  assert.deepEqual(await store.series.restore('trends', [old, recent]), { created: 1, present: 1 });
  const lines = (await readFile(path.join(target, 'trends.jsonl'), 'utf8')).split('\n').filter((l) => l !== '');
  assert.deepEqual(lines.map((l) => JSON.parse(l)), [recent, old]);
});
