import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runEstate, type CliResult } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { createKeyWithCli, replicaPostgres, startReplicas, type Replica } from './helpers/replicas.ts';
import type { TestResponse } from './helpers/server.ts';
import { openStream } from './helpers/sse.ts';
import { waitUntil } from './helpers/wait-until.ts';

// Three `estate serve` processes on one PostgreSQL database, with CLI
// writers beside them (issue 14): what one replica or writer stores, every
// replica answers alike. The store's failure under load is in postgres-outage.test.ts.

const completion = (task: string, title = `Task ${task}`) => ({ task_id: task, board: 'ops', assignee: 'ana', title });
const entry = (slug: string, title = `Piece ${slug}`) => ({ title, slug, content_type: 'note', target_site: 'garden' });

/** One attempt to store a keyed record: its key, the title it was sent with (the field its variants differ in), and its answer. */
interface Attempt {
  key: string;
  title: string;
  via: 'http' | 'cli';
  answer: TestResponse | CliResult;
}

test('three replicas and CLI writers: concurrent writes with replays and conflicts store each record once, and every replica answers the same feeds', { timeout: 60_000 }, async (t) => {
  const pg = await replicaPostgres(t);
  if (!pg) return;
  const replicas = await startReplicas(t, pg, 3);
  const cliDir = await tempDataDir(t);
  const { key } = await createKeyWithCli(pg, cliDir, 'alice');
  const attempts: Promise<Attempt>[] = [];
  const http = (r: Replica, path: string, k: string, title: string, body: object) =>
    attempts.push(r.request('POST', path, { key, body }).then((answer) => ({ key: k, title, via: 'http' as const, answer })));
  const cli = (args: string[], k: string, title: string) =>
    attempts.push(runEstate([...args, '--json', '--store', pg.url, '--data-dir', cliDir], { timeoutMs: 30_000 }).then((answer) => ({ key: k, title, via: 'cli' as const, answer })));

  // Every key is sent three times alike through three replicas; some also with another title (a conflict), some also by the CLI.
  for (let i = 0; i < 24; i++) {
    const task = `C-${i}`;
    for (let n = 0; n < 3; n++) http(replicas[(i + n) % 3] as Replica, '/work/complete', `work:${task}`, `Task ${task}`, completion(task));
    if (i % 4 === 0) http(replicas[(i + 1) % 3] as Replica, '/work/complete', `work:${task}`, 'Other', completion(task, 'Other'));
    if (i % 6 === 1 || i % 6 === 3) {
      const title = i % 6 === 1 ? `Task ${task}` : 'By the CLI';
      cli(['work', 'complete', '--task-id', task, '--board', 'ops', '--assignee', 'ana', '--title', title], `work:${task}`, title);
    }
  }
  for (let i = 0; i < 12; i++) {
    const slug = `e-${i}`;
    for (let n = 0; n < 3; n++) http(replicas[(i + n) % 3] as Replica, '/publishing/register', `pub:${slug}`, `Piece ${slug}`, entry(slug));
    if (i % 3 === 0) http(replicas[(i + 2) % 3] as Replica, '/publishing/register', `pub:${slug}`, 'Other', entry(slug, 'Other'));
    if (i % 4 === 1) cli(['publish', 'register', '--title', `Piece ${slug}`, '--slug', slug, '--content-type', 'note', '--target-site', 'garden'], `pub:${slug}`, `Piece ${slug}`);
  }
  const settled = await Promise.all(attempts);

  // Every replica's feeds, read after the writes: identical, and each key in them once.
  const feeds = await Promise.all(replicas.map((r) => r.request('GET', '/work/feed?limit=1000')));
  const latest = await Promise.all(replicas.map((r) => r.request('GET', '/publishing/latest?limit=1000')));
  for (const page of [...feeds, ...latest]) assert.equal(page.status, 200, page.text);
  for (const page of feeds.slice(1)) assert.deepEqual(page.json, feeds[0]?.json, 'every replica answers the same work feed');
  for (const page of latest.slice(1)) assert.deepEqual(page.json, latest[0]?.json, 'every replica answers the same publishing feed');
  const stored = new Map<string, Record<string, unknown>>();
  for (const r of feeds[0]?.json.items ?? []) stored.set(`work:${r.task_id}`, r);
  for (const r of latest[0]?.json.items ?? []) stored.set(`pub:${r.slug}`, r);
  assert.equal(feeds[0]?.json.count, 24, 'each completion once');
  assert.equal(latest[0]?.json.count, 12, 'each entry once');
  assert.equal(stored.size, 36);

  for (const [k, record] of stored) {
    const mine = settled.filter((a) => a.key === k);
    const created = mine.filter((a) => a.via === 'http' && (a.answer as TestResponse).status === 201);
    // A key the CLI also wrote may have been created by the CLI: then no HTTP answer is 201.
    if (mine.some((a) => a.via === 'cli')) assert.ok(created.length <= 1, `${k}: at most one 201`);
    else assert.equal(created.length, 1, `${k}: one 201`);
    for (const a of mine) {
      const same = a.title === record.title;
      if (a.via === 'http') {
        const answer = a.answer as TestResponse;
        if (!same) assert.equal(answer.status, 409, `${k} with title ${a.title}: ${answer.text}`);
        else {
          assert.ok(answer.status === 201 || answer.status === 200, `${k}: ${answer.status} ${answer.text}`);
          assert.deepEqual(answer.json, record, `${k}: every acknowledgement carries the stored record`);
        }
      } else {
        const answer = a.answer as CliResult;
        assert.equal(answer.code, same ? 0 : 5, `${k} by the CLI with title ${a.title}: ${answer.stderr}`);
        if (same) assert.deepEqual(answer.json, record);
        else assert.match(answer.stderr, /already (recorded|registered)/);
      }
    }
  }
  // Each key sent with two titles has a losing one: refused, never stored.
  const refused = settled.filter((a) => (a.via === 'http' ? (a.answer as TestResponse).status === 409 : (a.answer as CliResult).code === 5)).length;
  const twoTitles = [...stored.keys()].filter((k) => new Set(settled.filter((a) => a.key === k).map((a) => a.title)).size === 2).length;
  assert.ok(twoTitles >= 10 && refused >= twoTitles, `${refused} conflicts refused over ${twoTitles} keys sent with two titles`);
});

test('a key created or revoked through one host is honoured by every replica within 3 s', { timeout: 60_000 }, async (t) => {
  const pg = await replicaPostgres(t);
  if (!pg) return;
  const replicas = await startReplicas(t, pg, 3);
  const cliDir = await tempDataDir(t);
  const statuses = (key: string) => Promise.all(replicas.map(async (r) => (await r.request('GET', '/training/runs', { key })).status));

  const { key, keyId } = await createKeyWithCli(pg, cliDir, 'bob');
  await waitUntil('the new key is accepted by every replica', async () => (await statuses(key)).every((s) => s === 200), 3000);

  const revoked = await runEstate(['keys', 'revoke', keyId, '--json', '--store', pg.url, '--data-dir', cliDir]);
  assert.equal(revoked.code, 0, revoked.stderr);
  assert.equal(revoked.json.key_id, keyId);
  await waitUntil('the revoked key is refused by every replica', async () => (await statuses(key)).every((s) => s === 403), 3000);
  // And it stays refused (no replica's cache brings it back).
  assert.deepEqual(await statuses(key), [403, 403, 403]);
});

test('a training run created on one replica is its user\'s on every replica, and not found for another user', { timeout: 60_000 }, async (t) => {
  const pg = await replicaPostgres(t);
  if (!pg) return;
  const [a, b, c] = (await startReplicas(t, pg, 3)) as [Replica, Replica, Replica];
  const cliDir = await tempDataDir(t);
  const alice = (await createKeyWithCli(pg, cliDir, 'alice')).key;
  const bob = (await createKeyWithCli(pg, cliDir, 'bob')).key;

  const created = await a.request('POST', '/training/start', { key: alice, body: { name: 'nightly', model: 'small-7b', params: { epochs: 3 } } });
  assert.equal(created.status, 201, created.text);
  const path = `/training/runs/${created.json.run_id}`;
  for (const r of [b, c]) {
    const seen = await r.request('GET', path, { key: alice });
    assert.equal(seen.status, 200, seen.text);
    assert.deepEqual(seen.json, created.json);
    assert.deepEqual((await r.request('GET', '/training/runs', { key: alice })).json, [created.json]);
    const foreign = await r.request('GET', path, { key: bob });
    assert.equal(foreign.status, 404);
    assert.deepEqual(foreign.json, (await r.request('GET', '/training/runs/run_0123456789abcdef', { key: bob })).json, 'a foreign run is answered as a missing one');
    assert.deepEqual((await r.request('GET', '/training/runs', { key: bob })).json, []);
  }
  assert.equal((await b.request('DELETE', path, { key: bob })).status, 404);
  assert.equal((await c.request('GET', path, { key: alice })).status, 200, "another user's delete left it alone");
  assert.equal((await c.request('DELETE', path, { key: alice })).status, 204);
  assert.equal((await a.request('GET', path, { key: alice })).status, 404);
});

test("a completion written on one replica or by the CLI appears on the other replicas' /work/stream within 2 s", { timeout: 60_000 }, async (t) => {
  const pg = await replicaPostgres(t);
  if (!pg) return;
  const [a, b, c] = (await startReplicas(t, pg, 3)) as [Replica, Replica, Replica];
  const cliDir = await tempDataDir(t);
  const { key } = await createKeyWithCli(pg, cliDir, 'alice');
  const streams = await Promise.all([b, c].map((r) => openStream(t, `${r.url}/work/stream`)));
  for (const s of streams) assert.equal(s.status, 200);
  const received = (s: (typeof streams)[number]) => s.events.filter((e) => e.event === 'completion').map((e) => JSON.parse(e.data));

  const written = await a.request('POST', '/work/complete', { key, body: completion('live-1') });
  assert.equal(written.status, 201, written.text);
  await waitUntil('both streams carry the completion', async () => streams.every((s) => received(s).length >= 1), 2000);

  const byCli = await runEstate(['work', 'complete', '--task-id', 'live-2', '--board', 'ops', '--assignee', 'ana', '--title', 'Task live-2', '--json', '--store', pg.url, '--data-dir', cliDir]);
  assert.equal(byCli.code, 0, byCli.stderr);
  await waitUntil('both streams carry the CLI completion', async () => streams.every((s) => received(s).length >= 2), 2000);
  for (const s of streams) {
    assert.deepEqual(received(s), [written.json, byCli.json], 'each completion once, in write order');
    assert.deepEqual(s.events.filter((e) => e.event === 'completion').map((e) => e.id), [written.json.id, byCli.json.id]);
  }

  // A client that reconnects to another replica resumes after the last event it saw.
  const resumed = await openStream(t, `${a.url}/work/stream`, { 'Last-Event-ID': written.json.id });
  const [event] = await resumed.waitForEvents(1);
  assert.deepEqual(JSON.parse(event?.data ?? 'null'), byCli.json);
});
