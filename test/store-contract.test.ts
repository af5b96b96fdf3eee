import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'node:test';
import type { JsonRecord } from '../src/core/jsonl/parse-record.ts';
import { eventRecord, storedEvent } from '../src/core/events/stored-events.ts';
import type { KeyRecord } from '../src/core/keys/key-store.ts';
import type { Scope } from '../src/core/keys/principal.ts';
import { EstateError } from '../src/errors.ts';
import { storesUnderTest } from './helpers/stores.ts';
import { waitUntil } from './helpers/wait-until.ts';

// One behavioural suite for every Store (src/core/store/store.ts): the data
// dir's, and PostgreSQL's where a server is available. What a store must do
// is written once here, so the stores cannot drift apart.

const at = (ms: number) => () => new Date(Date.UTC(2026, 0, 1) + ms);
const completion = (task: string, board = 'ops', extra: Record<string, unknown> = {}) => ({ task_id: task, board, assignee: 'ana', title: `Task ${task}`, ...extra });
const entry = (slug: string, site = 'blog', type = 'post') => ({ title: `Piece ${slug}`, slug, content_type: type, target_site: site });
const LIMITS = { maxRunsPerUser: 2, maxParamsBytes: 64 };
/** A sample of `node` at `at(i)` (as the collector makes one), with a disk snapshot per mount. */
const sample = (node: string, i: number, mounts = ['/']) => {
  const ts = at(i)().toISOString();
  return {
    trend: { ts, node, cpu_pct: i, mem_used_pct: 50 },
    disks: mounts.map((mount) => ({ ts, node, mount, fs_type: 'ext4', total_bytes: 100, used_bytes: i, free_bytes: 100 - i })),
    pulse: { ts, node, status: 'healthy' as const, checks: { memory: { status: 'healthy' as const, value: i } } },
  };
};
const heartbeat = (node: string, i: number) => ({ name: node, last_seen: at(i)().toISOString(), status: 'healthy' as const });

for (const kind of storesUnderTest()) {
  const open = async (t: test.TestContext) => {
    const opened = await kind.open(t);
    if (!opened) t.skip(`the ${kind.name} store is not available here`);
    return opened;
  };

  test(`${kind.name}: a keyed write is created once, replayed when the same, a conflict when not`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const { completions } = opened.store;
    const first = await completions.write(completion('EST-1', 'ops', { commit_sha: 'abc' }), at(0));
    assert.equal(first.outcome, 'created');
    assert.match(String(first.record.id), /^wc_[0-9a-f]{16}$/);
    assert.equal(first.record.completed_at, at(0)().toISOString());
    assert.deepEqual(Object.keys(first.record), ['id', 'task_id', 'board', 'assignee', 'title', 'commit_sha', 'completed_at']);
    assert.deepEqual(first.differing, []);

    // Absent and null optional fields are the same request.
    const replay = await completions.write(completion('EST-1', 'ops', { commit_sha: 'abc', summary: null }), at(5));
    assert.equal(replay.outcome, 'replayed');
    assert.deepEqual(replay.record, first.record);

    const conflict = await completions.write(completion('EST-1', 'ops', { title: 'Another', commit_sha: 'abc' }), at(9));
    assert.equal(conflict.outcome, 'conflict');
    assert.deepEqual(conflict.record, first.record);
    assert.deepEqual(conflict.differing, ['title']);

    // The same task on another board is another record.
    assert.equal((await completions.write(completion('EST-1', 'garden'), at(10))).outcome, 'created');
  });

  test(`${kind.name}: concurrent writers of one key, through two store instances, get exactly one created`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const other = await opened.another();
    const writes = Array.from({ length: 24 }, (_, i) => (i % 2 ? other : opened.store).entries.write(entry('same'), at(i)));
    const results = await Promise.all(writes);
    assert.equal(results.filter((r) => r.outcome === 'created').length, 1);
    assert.equal(results.filter((r) => r.outcome === 'replayed').length, 23);
    assert.equal(new Set(results.map((r) => r.record.entry_id)).size, 1);
    assert.equal((await opened.store.entries.newest(100)).records.length, 1);
  });

  test(`${kind.name}: pages are newest first, limited, and filtered by facet`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const { completions, entries } = opened.store;
    for (const [i, board] of ['ops', 'garden', 'ops', 'research', 'ops'].entries()) await completions.write(completion(`T-${i}`, board), at(i * 1000));
    const page = await completions.newest(3);
    assert.deepEqual(page.records.map((r) => r.task_id), ['T-4', 'T-3', 'T-2']);
    assert.equal(page.skipped, 0);
    assert.deepEqual((await completions.newest(10, { facet: 'board', value: 'ops' })).records.map((r) => r.task_id), ['T-4', 'T-2', 'T-0']);
    assert.deepEqual((await completions.newest(1, { facet: 'board', value: 'ops' })).records.map((r) => r.task_id), ['T-4']);
    assert.deepEqual((await completions.newest(10, { facet: 'board', value: 'none' })).records, []);

    await entries.write(entry('a', 'blog', 'post'), at(0));
    await entries.write(entry('b', 'docs', 'post'), at(1));
    await entries.write(entry('c', 'blog', 'note'), at(2));
    const ids = (records: JsonRecord[]) => records.map((r) => r.slug);
    assert.deepEqual(ids((await entries.newest(10, { facet: 'target_site', value: 'blog' })).records), ['c', 'a']);
    assert.deepEqual(ids((await entries.newest(10, { facet: 'content_type', value: 'post' })).records), ['b', 'a']);
    assert.deepEqual(ids((await entries.newest(10)).records), ['c', 'b', 'a']);
  });

  test(`${kind.name}: pages of every facet value a predicate accepts, newest first, whatever came after them`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const types = ['essay', 'poem', 'note', 'essay', 'sketch', 'essay', ...Array.from({ length: 20 }, () => 'poem')];
    for (const [i, type] of types.entries()) await opened.store.entries.write(entry(`p-${i}`, 'garden', type), at(i));
    const writing = { facet: 'content_type', accepts: (type: string) => type === 'essay' || type === 'note' };
    const other = { facet: 'content_type', accepts: (type: string) => !writing.accepts(type) };
    const slugs = (records: JsonRecord[] | undefined) => records?.map((r) => r.slug);
    // A second instance reads a log it has not indexed yet; the first, one it has.
    for (const store of [await opened.another(), opened.store, opened.store]) {
      assert.deepEqual(slugs((await store.entries.newest(3, writing)).records), ['p-5', 'p-3', 'p-2']);
      assert.deepEqual(slugs((await store.entries.newest(10, writing)).records), ['p-5', 'p-3', 'p-2', 'p-0']);
      assert.deepEqual(slugs((await store.entries.newest(3, other)).records), ['p-25', 'p-24', 'p-23']);
      assert.deepEqual(slugs((await store.entries.newest(10, { facet: 'content_type', accepts: () => false })).records), []);
      assert.deepEqual(slugs(await store.entries.since('start', 2, writing)), ['p-3', 'p-5']);
      const first = String((await store.entries.newest(1, { facet: 'content_type', value: 'sketch' })).records[0]?.entry_id);
      assert.deepEqual(slugs(await store.entries.since(first, 100, { facet: 'content_type', accepts: (type) => type !== 'poem' })), ['p-5']);
    }
  });

  test(`${kind.name}: a record is found by its id`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const { record } = await opened.store.entries.write({ ...entry('found'), url: 'https://example.org/found' }, at(0));
    assert.match(String(record.entry_id), /^pub_[0-9a-f]{16}$/);
    assert.deepEqual(await opened.store.entries.get(String(record.entry_id)), record);
    assert.equal(await opened.store.entries.get('pub_0000000000000000'), undefined);
    const done = await opened.store.completions.write(completion('EST-9'), at(0));
    assert.deepEqual(await opened.store.completions.get(String(done.record.id)), done.record);
    // Ids of one kind are not ids of the other.
    assert.equal(await opened.store.completions.get(String(record.entry_id)), undefined);
  });

  test(`${kind.name}: a record is found by its key; a run's start is kept once; the service's extra fields follow the time and are not compared on a replay`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const { starts, completions } = opened.store;
    const started = await starts.write({ task_id: 'backup-1', board: 'ops', assignee: 'cron' }, at(0));
    assert.equal(started.outcome, 'created');
    assert.match(String(started.record.id), /^ws_[0-9a-f]{16}$/);
    assert.deepEqual(Object.keys(started.record), ['id', 'task_id', 'board', 'assignee', 'started_at']);
    assert.equal((await starts.write({ task_id: 'backup-1', board: 'ops', assignee: 'cron' }, at(5))).outcome, 'replayed');
    assert.deepEqual((await starts.write({ task_id: 'backup-1', board: 'ops', assignee: 'other' }, at(5))).differing, ['assignee']);
    // Another instance sees it by its key; another board's same task is not it.
    const other = await opened.another();
    assert.deepEqual(await other.starts.byKey(['ops', 'backup-1']), started.record);
    assert.equal(await other.starts.byKey(['garden', 'backup-1']), undefined);
    assert.equal(await other.starts.byKey(['ops', 'backup-2']), undefined);

    const extra = (time: Date) => ({ started_at: at(0)().toISOString(), duration_s: (time.getTime() - at(0)().getTime()) / 1000 });
    const done = await completions.write(completion('backup-1'), at(1500), extra);
    assert.equal(done.outcome, 'created');
    assert.deepEqual(Object.keys(done.record), ['id', 'task_id', 'board', 'assignee', 'title', 'completed_at', 'started_at', 'duration_s']);
    assert.equal(done.record.duration_s, 1.5);
    assert.deepEqual(await other.completions.byKey(['ops', 'backup-1']), done.record);
    assert.deepEqual((await other.completions.newest(1)).records[0], done.record);
    // A replay without the extra fields is the same completion.
    const replay = await completions.write(completion('backup-1'), at(9000));
    assert.equal(replay.outcome, 'replayed');
    assert.deepEqual(replay.record, done.record);
  });

  test(`${kind.name}: a watched event is stored once whoever notices it first; one noticed again with an aged message keeps the first`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const other = await opened.another();
    const stale = { ts: '2026-03-01T10:15:00.000Z', kind: 'node_stale' as const, source: 'heartbeat' as const, subject: 'web-1', message: 'web-1 has not been seen for 15m' };
    // Two replicas (two instances) notice it at once: one record.
    const [a, b] = await Promise.all([opened.store.events.write(eventRecord(stale), at(0)), other.events.write(eventRecord(stale), at(0))]);
    assert.deepEqual([a.outcome, b.outcome].sort(), ['created', 'replayed']);
    const stored = (a.outcome === 'created' ? a : b).record;
    assert.match(String(stored.id), /^ev_[0-9a-f]{16}$/);
    assert.deepEqual(Object.keys(stored), ['id', 'kind', 'source', 'subject', 'ts', 'message', 'occurrence', 'recorded_at']);
    const aged = await other.events.write(eventRecord({ ...stale, message: 'web-1 has not been seen for 40m' }), at(5));
    assert.equal(aged.outcome, 'conflict');
    assert.equal(aged.record.message, 'web-1 has not been seen for 15m');
    // Another time of the same node, or another node at that time, is another event.
    await opened.store.events.write(eventRecord({ ...stale, ts: '2026-03-02T10:15:00.000Z' }), at(6));
    await opened.store.events.write(eventRecord({ ...stale, subject: 'web-2' }), at(7));
    assert.equal((await other.events.newest(10)).records.length, 3);
    assert.deepEqual((await other.events.newest(10, { facet: 'subject', value: 'web-1' })).records.map((r) => r.ts), ['2026-03-02T10:15:00.000Z', '2026-03-01T10:15:00.000Z']);
    assert.deepEqual(storedEvent((await other.events.newest(1, { facet: 'subject', value: 'web-2' })).records[0] as JsonRecord), { ...stale, subject: 'web-2' });
  });

  test(`${kind.name}: the stored events older than a cutoff (by ts) are pruned; the rest stay, and a cursor of a pruned one is gone`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const event = (ts: string, subject: string) => eventRecord({ ts, kind: 'pulse_degraded', source: 'pulse', subject, message: `${subject} is degraded` });
    const old = await opened.store.events.write(event('2026-03-01T10:00:00.000Z', 'web-1'), at(0));
    await opened.store.events.write(event('2026-03-02T10:00:00.000Z', 'web-1'), at(1));
    await opened.store.events.write(event('2026-03-03T10:00:00.000Z', 'web-2'), at(2));
    assert.equal(await opened.store.events.prune(new Date('2026-03-02T00:00:00.000Z')), 1);
    const other = await opened.another();
    assert.deepEqual((await other.events.newest(10)).records.map((r) => r.ts), ['2026-03-03T10:00:00.000Z', '2026-03-02T10:00:00.000Z']);
    assert.deepEqual((await opened.store.events.newest(10)).records.map((r) => r.ts), ['2026-03-03T10:00:00.000Z', '2026-03-02T10:00:00.000Z']);
    assert.equal(await other.events.since(String(old.record.id), 10), undefined);
    assert.equal(await opened.store.events.prune(new Date('2026-03-02T00:00:00.000Z')), 0);
    // Stored again after the prune, it is a new record.
    assert.equal((await opened.store.events.write(event('2026-03-01T10:00:00.000Z', 'web-1'), at(3))).outcome, 'created');
  });

  test(`${kind.name}: since resumes after an id, oldest first, bounded, optionally of one facet`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const { completions } = opened.store;
    const written: JsonRecord[] = [];
    for (const [i, board] of ['ops', 'garden', 'ops', 'ops'].entries()) written.push((await completions.write(completion(`S-${i}`, board), at(i))).record);
    const tasks = (records: JsonRecord[] | undefined) => records?.map((r) => r.task_id);
    assert.deepEqual(tasks(await completions.since('start', 100)), ['S-0', 'S-1', 'S-2', 'S-3']);
    assert.deepEqual(tasks(await completions.since('start', 2)), ['S-2', 'S-3'], 'the newest `limit`, oldest first');
    assert.deepEqual(tasks(await completions.since(String(written[1]?.id), 100)), ['S-2', 'S-3']);
    assert.deepEqual(tasks(await completions.since(String(written[0]?.id), 100, { facet: 'board', value: 'ops' })), ['S-2', 'S-3']);
    assert.deepEqual(await completions.since(String(written[3]?.id), 100), []);
    assert.equal(await completions.since('wc_ffffffffffffffff', 100), undefined, 'an unknown id');
  });

  test(`${kind.name}: subscribers get records written by this store and by another writer, until they unsubscribe`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const other = await opened.another();
    const seen: JsonRecord[] = [];
    const unsubscribe = await opened.store.completions.subscribe((records) => seen.push(...records));
    await opened.store.completions.write(completion('L-1'), at(0));
    await other.completions.write(completion('L-2'), at(1));
    const has = (task: string) => seen.some((r) => r.task_id === task);
    await waitUntil('both completions reach the subscriber', async () => {
      // refresh is the fallback for a missed notification; a live store needs none, a call must not hurt.
      if (!has('L-2')) await opened.store.completions.refresh();
      return has('L-1') && has('L-2');
    });
    const tasks = [...new Set(seen.map((r) => r.task_id))];
    assert.deepEqual(tasks, ['L-1', 'L-2'], 'in write order');
    await unsubscribe();
    const count = seen.length;
    await other.completions.write(completion('L-3'), at(2));
    await opened.store.completions.refresh();
    assert.equal(seen.length, count, 'nothing after unsubscribing');
    assert.ok(!has('L-3'));
  });

  test(`${kind.name}: training runs belong to their user, within quotas`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const { training } = opened.store;
    const now = at(0)();
    const first = await training.create('alice', { name: 'one', params: { lr: 0.1 } }, LIMITS, now);
    assert.match(first.run_id, /^run_[0-9a-f]{16}$/);
    assert.deepEqual(
      { ...first, run_id: 'x' },
      { run_id: 'x', user_id: 'alice', status: 'queued', name: 'one', model: null, dataset: null, params: { lr: 0.1 }, created_at: now.toISOString(), updated_at: now.toISOString() },
    );
    const second = await training.create('alice', {}, LIMITS, at(1000)());
    const bobs = await training.create('bob', { model: 'm' }, LIMITS, now);
    assert.deepEqual((await training.list('alice')).map((r) => r.run_id), [second.run_id, first.run_id], 'newest first');
    assert.deepEqual((await training.list('bob')).map((r) => r.run_id), [bobs.run_id]);
    assert.deepEqual(await training.list('carol'), []);
    assert.deepEqual(await training.get('alice', first.run_id), first);
    assert.equal(await training.get('bob', first.run_id), undefined, "another user's run does not exist");
    assert.equal(await training.get('alice', '../../keys'), undefined);
    assert.equal(await training.delete('bob', first.run_id), false);

    await assert.rejects(training.create('alice', {}, LIMITS, now), (err: EstateError) => err.code === 'validation' && err.issues?.[0]?.type === 'quota_exceeded');
    await assert.rejects(training.create('bob', { params: { big: 'x'.repeat(100) } }, LIMITS, now), (err: EstateError) => err.code === 'payload_too_large');
    assert.equal(await training.delete('alice', first.run_id), true);
    assert.equal(await training.delete('alice', first.run_id), false);
    assert.equal(await training.get('alice', first.run_id), undefined);
    assert.equal((await training.create('alice', {}, LIMITS, now)).status, 'queued', 'a deleted run frees its quota');

    const other = await opened.another();
    assert.deepEqual((await other.training.list('bob')).map((r) => r.run_id), [bobs.run_id], 'another instance sees the same runs');
  });

  test(`${kind.name}: keys are created, listed, looked up, touched and revoked; every instance sees it`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const { credentials } = opened.store;
    const other = await opened.another();
    assert.deepEqual(await credentials.list(), []);
    assert.equal(await credentials.health(), 'ok');
    const now = at(0)();
    const { info, key } = await credentials.create({ userId: 'alice', name: 'laptop', scopes: ['read'], now });
    assert.match(key, new RegExp(`^est_${info.key_id}_[A-Za-z0-9_-]{32}$`));
    assert.deepEqual(info, {
      key_id: info.key_id,
      user_id: 'alice',
      name: 'laptop',
      scopes: ['read'],
      created_at: now.toISOString(),
      expires_at: null,
      revoked_at: null,
      last_used_at: null,
      node: null,
    });
    const second = await credentials.create({ userId: 'bob', now: at(1)() });
    assert.deepEqual(second.info.scopes, ['read', 'write'], 'read and write by default');
    const listed = await credentials.list();
    assert.deepEqual(listed.map((k) => k.key_id), [info.key_id, second.info.key_id]);
    assert.ok(listed.every((k) => !('hash' in k)), 'no hash is listed');
    await assert.rejects(credentials.create({ userId: 'not a user' }), (err: EstateError) => err.code === 'validation');

    const found = await credentials.lookup(info.key_id);
    assert.equal(found?.user_id, 'alice');
    assert.match(String(found?.hash), /^sha256:[0-9a-f]{64}$/);
    assert.equal(await credentials.lookup('000000000000'), undefined);
    await waitUntil('another instance sees the new key', async () => (await other.credentials.lookup(info.key_id)) !== undefined);

    await credentials.touch(info.key_id, at(60_000)());
    await credentials.touch(info.key_id, at(30_000)());
    assert.equal((await credentials.list())[0]?.last_used_at, at(60_000)().toISOString(), 'an earlier use never replaces a later one');
    await credentials.touch('000000000000', at(1)());

    const revoked = await other.credentials.revoke(info.key_id, at(120_000)());
    assert.equal(revoked?.revoked_at, at(120_000)().toISOString());
    assert.equal((await credentials.revoke(info.key_id, at(180_000)()))?.revoked_at, at(120_000)().toISOString(), 'the first revocation stands');
    assert.equal(await credentials.revoke('000000000000', now), undefined);
    await credentials.touch(info.key_id, at(240_000)());
    const after = (await credentials.list()).find((k) => k.key_id === info.key_id);
    assert.equal(after?.revoked_at, at(120_000)().toISOString(), 'a later use never undoes a revocation');
    await waitUntil('this instance sees the revocation', async () => Boolean((await credentials.lookup(info.key_id))?.revoked_at));
  });

  test(`${kind.name}: an ingest key keeps its node (any characters a node name may hold), listed, looked up and restored with it`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const { credentials } = opened.store;
    const node = 'web-1, rack 2 ü:node';
    const bound = await credentials.create({ userId: 'web-1', scopes: ['ingest'], node, now: at(0)() });
    assert.deepEqual([bound.info.scopes, bound.info.node], [['ingest'], node]);
    const any = await credentials.create({ userId: 'relay', scopes: ['read', 'ingest'], now: at(1)() });
    assert.deepEqual([any.info.scopes, any.info.node], [['read', 'ingest'], null]);
    assert.deepEqual((await credentials.list()).map((k) => [k.scopes, k.node]), [[['ingest'], node], [['read', 'ingest'], null]]);
    const other = await opened.another();
    await waitUntil('another instance sees the key with its node', async () => (await other.credentials.lookup(bound.info.key_id))?.node === node);
    assert.deepEqual((await other.credentials.lookup(bound.info.key_id))?.scopes, ['ingest']);
    const all = await credentials.all();
    assert.deepEqual((await other.credentials.restore(all)).map((r) => r.outcome), ['present', 'present'], 'the same node: the same key');
    const moved = { ...(all[0] as KeyRecord), node: 'web-2' };
    assert.deepEqual((await credentials.restore([moved])).map((r) => r.outcome), ['conflict'], 'another node: another key');
    for (const [why, options] of [
      ['a node without the ingest scope', { userId: 'a', scopes: ['read', 'write'] as Scope[], node: 'web-1' }],
      ['a node by default scopes', { userId: 'a', node: 'web-1' }],
      ['an empty node', { userId: 'a', scopes: ['ingest'] as Scope[], node: '' }],
      ['a node with a control character', { userId: 'a', scopes: ['ingest'] as Scope[], node: 'web\n1' }],
    ] as const) {
      await assert.rejects(credentials.create(options), (err: EstateError) => err.code === 'validation', why);
    }
    assert.equal((await credentials.list()).length, 2, 'nothing refused was stored');
  });

  test(`${kind.name}: the token secret is made once and stays the same everywhere`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const other = await opened.another();
    assert.equal(await opened.store.tokenSecret.current(), undefined, 'no secret before the first token');
    const made = await Promise.all([opened.store.tokenSecret.ensure(), other.tokenSecret.ensure(), opened.store.tokenSecret.ensure()]);
    assert.equal(made[0]?.length, 32);
    for (const secret of made) assert.deepEqual(Buffer.from(secret), Buffer.from(made[0] as Uint8Array));
    assert.deepEqual(Buffer.from(await opened.store.tokenSecret.ensure()), Buffer.from(made[0] as Uint8Array));
    await waitUntil('the verifier side sees the secret', async () => {
      const current = await other.tokenSecret.current();
      return current !== undefined && Buffer.from(current).equals(Buffer.from(made[0] as Uint8Array));
    });
  });

  test(`${kind.name}: describe names the store without a path or a password, and health is ok`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const text = opened.store.describe();
    assert.ok(text.length > 0);
    assert.ok(!text.includes(opened.dataDir), text);
    assert.ok(!/:[^@/:]+@/.test(text), `no password in ${text}`);
    await opened.store.ready();
    const health = await opened.store.health();
    assert.equal(health.credential_store, 'ok');
    assert.ok(Object.values(health).every((v) => v === 'ok'), JSON.stringify(health));
  });

  test(`${kind.name}: tally counts every record, by time and by assignee, with the newest of each and its boards`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const { completions, entries } = opened.store;
    const empty = await completions.tally([new Date(0)]);
    assert.deepEqual(empty, { count: 0, since: [0], earliest: null, skipped: 0, groups: [] });
    const HOUR = 3_600_000;
    await completions.write({ ...completion('T-1', 'ops'), assignee: 'ana' }, at(0));
    await completions.write({ ...completion('T-2', 'infra'), assignee: 'ana' }, at(10 * HOUR));
    await completions.write({ ...completion('T-3', 'ops'), assignee: 'bo' }, at(20 * HOUR));
    const last = await completions.write({ ...completion('T-4', 'ops'), assignee: 'ana' }, at(30 * HOUR));
    await completions.write({ ...completion('T-4', 'ops'), assignee: 'ana' }, at(31 * HOUR)); // a replay counts once
    const tally = await completions.tally([new Date(at(10 * HOUR)().getTime()), new Date(at(25 * HOUR)().getTime())]);
    assert.equal(tally.count, 4);
    assert.deepEqual(tally.since, [3, 1], 'a cutoff counts records at or after it');
    assert.equal(tally.earliest, at(0)().toISOString());
    const groups = [...tally.groups].sort((a, b) => a.value.localeCompare(b.value));
    assert.deepEqual(
      groups.map((g) => [g.value, g.count, g.since, g.distinct, g.newest.task_id]),
      [
        ['ana', 3, [2, 1], ['infra', 'ops'], 'T-4'],
        ['bo', 1, [1, 0], ['ops'], 'T-3'],
      ],
    );
    assert.deepEqual(groups[0]?.newest, last.record);

    // Written by another process or replica: the next tally counts it.
    const other = await opened.another();
    await other.completions.write({ ...completion('T-5', 'ops'), assignee: 'cy' }, at(40 * HOUR));
    await waitUntil('the other writer\'s record in the tally', async () => (await completions.tally([])).count === 5);

    // A log without grouping counts only.
    await entries.write(entry('a'), at(0));
    await entries.write(entry('b'), at(HOUR));
    assert.deepEqual(await entries.tally([new Date(at(HOUR)().getTime())]), { count: 2, since: [1], earliest: at(0)().toISOString(), skipped: 0, groups: [] });
  });

  test(`${kind.name}: series: concurrent samples through two instances are stored whole; concurrent heartbeat merges keep every node`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const other = await opened.another();
    const stores = [opened.store, other];
    await Promise.all(Array.from({ length: 16 }, (_, i) => (stores[i % 2] as typeof other).series.appendSample(sample(`n${i}`, i))));
    const nodes16 = Array.from({ length: 16 }, (_, i) => `n${i}`).sort();
    for (const series of ['trends', 'disk', 'pulse'] as const) {
      const page = await other.series.newest(series, 100);
      assert.deepEqual(page.items.map((r) => r.node).sort(), nodes16, series);
    }
    if (opened.store.kind === 'data-dir') {
      for (const log of ['trends.jsonl', 'disk.jsonl', 'health-pulse.jsonl']) {
        const lines: string[] = (await readFile(path.join(opened.dataDir, log), 'utf8')).split('\n');
        assert.equal(lines.pop(), '', `${log} ends with a whole line`);
        assert.deepEqual(lines.map((l) => JSON.parse(l).node).sort(), nodes16, log);
      }
    }
    const outcomes = await Promise.all(Array.from({ length: 12 }, (_, i) => (stores[i % 2] as typeof other).series.mergeHeartbeat(heartbeat(`n${i % 6}`, i))));
    assert.ok(outcomes.every((o) => o.outcome === 'merged'));
    const doc = await opened.store.series.heartbeat();
    assert.equal(doc.exists, true);
    assert.deepEqual((doc.data as { nodes: { name: string }[] }).nodes.map((n) => n.name).sort(), ['n0', 'n1', 'n2', 'n3', 'n4', 'n5']);
  });

  test(`${kind.name}: series: ingest stores each sample once by node and ts, and makes each node's heartbeat entry its newest sample's`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const { series } = opened.store;
    await series.mergeHeartbeat({ name: 'b', last_seen: at(9_000)().toISOString(), status: 'degraded' });
    const first = [sample('a', 0), sample('b', 1), sample('a', 2, ['/', '/srv']), sample('a', 2, ['/', '/srv'])];
    assert.deepEqual(await series.ingest(first), { stored: 3, duplicates: 1 }, 'the same sample twice in one batch is stored once');
    assert.deepEqual(await series.ingest([sample('a', 2, ['/', '/srv']), sample('b', 1), sample('a', 3)]), { stored: 1, duplicates: 2 });
    const trends = await series.newest('trends', 10);
    assert.deepEqual(trends.items.map((r) => [r.node, r.cpu_pct]), [['a', 3], ['a', 2], ['b', 1], ['a', 0]], 'newest first, each once');
    assert.deepEqual((await series.newest('trends', 2, { node: 'a' })).items.map((r) => r.cpu_pct), [3, 2]);
    assert.deepEqual((await series.newest('pulse', 10, { node: 'b' })).items.map((r) => r.ts), [at(1)().toISOString()]);
    assert.deepEqual((await series.newest('disk', 10, { node: 'a', mount: '/srv' })).items.map((r) => [r.ts, r.used_bytes]), [[at(2)().toISOString(), 2]]);
    assert.deepEqual((await series.newest('disk', 10, { node: 'a' })).items.map((r) => r.mount), ['/', '/srv', '/', '/']);
    assert.equal((await series.newest('disk', 10)).count, 5);
    assert.deepEqual((await series.newest('trends', 5, { node: 'nobody' })).items, []);
    assert.deepEqual(await series.nodes(), ['a', 'b']);
    // Records come back field for field, in their order.
    assert.deepEqual(Object.keys((await series.newest('trends', 1)).items[0] as object), ['ts', 'node', 'cpu_pct', 'mem_used_pct']);

    const doc = await series.heartbeat();
    const nodes = (doc.data as { nodes: Record<string, unknown>[] }).nodes;
    assert.deepEqual(nodes.find((n) => n.name === 'a'), { name: 'a', last_seen: at(3)().toISOString(), status: 'healthy' }, "a's newest sample");
    assert.deepEqual(nodes.find((n) => n.name === 'b'), { name: 'b', last_seen: at(9_000)().toISOString(), status: 'degraded' }, 'a newer stored entry stays');
  });

  test(`${kind.name}: series: two instances ingesting the same samples at once store each once; another instance reads them`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const [one, two, reader] = [opened.store, await opened.another(), await opened.another()];
    const batch = (from: number) => Array.from({ length: 40 }, (_, i) => sample(`n${(from + i) % 5}`, from + i));
    // Overlapping batches, some in the other order, from both at once.
    const calls = [0, 20, 40, 0, 20, 40].map((from, i) => {
      const samples = i % 2 === 0 ? batch(from) : batch(from).reverse();
      return (i % 2 === 0 ? one : two).series.ingest(samples);
    });
    const results = await Promise.all(calls);
    assert.equal(results.reduce((n, r) => n + r.stored, 0), 80, 'each of the 80 samples stored once');
    assert.equal(results.reduce((n, r) => n + r.duplicates, 0), 6 * 40 - 80);
    for (const series of ['trends', 'disk', 'pulse'] as const) assert.equal((await reader.series.newest(series, 1000)).count, 80, series);
    for (let n = 0; n < 5; n++) {
      const own = (await reader.series.newest('trends', 1000, { node: `n${n}` })).items;
      assert.equal(own.length, 16);
      assert.ok(own.every((r) => r.node === `n${n}`));
    }
    assert.deepEqual(await reader.series.nodes(), ['n0', 'n1', 'n2', 'n3', 'n4']);
    const entries = ((await reader.series.heartbeat()).data as { nodes: { name: string; last_seen: string }[] }).nodes;
    assert.deepEqual(entries.map((e) => [e.name, e.last_seen]).sort(), [75, 76, 77, 78, 79].map((i) => [`n${i % 5}`, at(i)().toISOString()]).sort());
  });

  test(`${kind.name}: series: pages read every record oldest first; restore stores each record once, by its key or, without node or ts, by its content`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const { series } = opened.store;
    await series.ingest([sample('a', 0), sample('b', 1), sample('a', 2)]);
    const pages: JsonRecord[][] = [];
    for await (const page of series.pages('trends', 2)) pages.push(page.records);
    assert.deepEqual(pages.map((p) => p.map((r) => r.cpu_pct)), [[0, 1], [2]]);
    // Past the ninth record and the 99th (orders that differ as numbers and as text).
    await series.ingest(Array.from({ length: 120 }, (_, i) => sample('c', 10 + i)));
    const seen: unknown[] = [];
    for await (const page of series.pages('trends', 7)) seen.push(...page.records.map((r) => r.cpu_pct));
    assert.deepEqual(seen, [0, 1, 2, ...Array.from({ length: 120 }, (_, i) => 10 + i)]);

    // Other tools' records without node or ts are stored in order among the others, each once by its content (PostgreSQL: also test/postgres-series.test.ts).
    const target = (await kind.open(t))?.store as typeof opened.store;
    const records = [...pages.flat(), { ts: at(5)().toISOString(), load: 1 }, { load: 2 }, sample('b', 6).trend];
    assert.deepEqual(await target.series.restore('trends', records), { created: 6, present: 0 });
    assert.deepEqual(await target.series.restore('trends', [records[5], records[1]] as JsonRecord[]), { created: 0, present: 2 }, 'a second restore of keyed records: present');
    assert.deepEqual(await target.series.restore('trends', [records[3], records[4]] as JsonRecord[]), { created: 0, present: 2 }, "a second restore of other tools' records: present");
    assert.deepEqual((await target.series.newest('trends', 10)).items, [...records].reverse());
    assert.deepEqual(await target.series.nodes(), ['a', 'b']);
    const disks = [{ ts: at(0)().toISOString(), node: 'a', mount: '/', used_bytes: 1 }, { ts: at(0)().toISOString(), node: 'a', used_bytes: 2 }];
    assert.deepEqual(await target.series.restore('disk', disks), { created: 2, present: 0 });
    assert.deepEqual(await target.series.restore('disk', disks), { created: 0, present: 2 });
  });

  test(`${kind.name}: series: prune removes the records dated before the cutoff, keeps the undated and later ones, and two instances pruning at once remove each once`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const { series } = opened.store;
    await series.ingest([sample('old', 0), sample('a', 1), sample('a', 5), sample('b', 6)]);
    const undated = [{ load: 1 }, { ts: 'not a date', node: 'a' }];
    await series.restore('trends', undated);
    const cutoff = at(5)();
    assert.equal((await series.prune('trends', cutoff, { dryRun: true })).removed, 2);
    assert.equal((await series.newest('trends', 10)).count, 6, 'a dry run removes nothing');

    const other = await opened.another();
    const both = await Promise.all([series.prune('trends', cutoff), other.series.prune('trends', cutoff)]);
    assert.equal(both[0].removed + both[1].removed, 2, 'each record removed is counted once');
    assert.deepEqual((await series.newest('trends', 10)).items, [...undated].reverse().concat([sample('b', 6).trend, sample('a', 5).trend]));
    assert.deepEqual((await series.newest('trends', 10, { node: 'a' })).items, [undated[1], sample('a', 5).trend]);
    assert.deepEqual((await series.newest('trends', 10, { node: 'old' })).items, []);
    assert.deepEqual(await series.nodes(), ['a', 'b', 'old'], 'old still has disk snapshots and pulse entries');

    // A cutoff is not inclusive: a record dated at it stays.
    for (const name of ['disk', 'pulse'] as const) assert.equal((await series.prune(name, cutoff)).removed, 2, name);
    assert.deepEqual((await series.newest('disk', 10)).items.map((r) => [r.node, r.ts]), [['b', at(6)().toISOString()], ['a', cutoff.toISOString()]]);
    assert.deepEqual(await series.nodes(), ['a', 'b'], 'a node with no record left is no longer listed');
    assert.equal((await series.prune('pulse', cutoff)).removed, 0, 'nothing left to remove');
  });

  test(`${kind.name}: series: a sample whose parts disagree, or a record with a field of the wrong type, is a validation error and nothing of the call is stored`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const { series } = opened.store;
    const mixed = sample('a', 2);
    mixed.pulse = { ...mixed.pulse, node: 'b' };
    await assert.rejects(series.ingest([sample('a', 1), mixed]), (err: EstateError) => err.code === 'validation' && /^sample 1: /.test(err.message));
    const noMount = sample('a', 3) as { disks: object[] };
    noMount.disks = [{ ts: at(3)().toISOString(), node: 'a', total_bytes: 1 }];
    await assert.rejects(series.ingest([noMount as ReturnType<typeof sample>]), (err: EstateError) => err.code === 'validation');
    await assert.rejects(series.restore('disk', [sample('a', 4).disks[0] as unknown as JsonRecord, { ts: at(5)().toISOString(), node: 'a', mount: 5 }]), (err: EstateError) => err.code === 'validation');
    for (const name of ['trends', 'disk', 'pulse'] as const) assert.equal((await series.newest(name, 10)).count, 0, name);
    assert.deepEqual(await series.nodes(), []);
  });

  test(`${kind.name}: series: the heartbeat is restored unless one is stored; one that is not a heartbeat is never merged into`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const { series } = opened.store;
    const doc = { nodes: [{ name: 'a', last_seen: at(0)().toISOString(), status: 'healthy', rack: 4 }], site: 'lab' };
    assert.equal(await series.restoreHeartbeat(doc), 'created');
    assert.equal(await series.restoreHeartbeat(structuredClone(doc)), 'present');
    assert.equal(await series.restoreHeartbeat({ nodes: [] }), 'conflict');
    assert.deepEqual((await series.heartbeat()).data, doc);
    assert.deepEqual(await series.mergeHeartbeat(heartbeat('b', 1)), { outcome: 'merged' });
    assert.deepEqual((await series.heartbeat()).data, { nodes: [...doc.nodes, heartbeat('b', 1)], site: 'lab' }, 'other entries and unknown fields kept');

    const odd = (await kind.open(t))?.store as typeof opened.store;
    assert.equal(await odd.series.restoreHeartbeat(42), 'created');
    const merged = await odd.series.mergeHeartbeat(heartbeat('a', 1));
    assert.equal(merged.outcome, 'unreadable');
    await odd.series.ingest([sample('a', 1)]);
    assert.equal((await odd.series.heartbeat()).data, 42, 'left as it was');
  });
}

// The hub's series (DESIGN.md 7a): ingest stores each sample once by node
// and ts, reads of one node or mount, the nodes, the heartbeat kept at each
// node's newest sample, and a copy out and back in. The same on every store.
const sampleAt = (node: string, second: number, mounts = ['/', '/data']) => {
  const ts = new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
  return {
    trend: { ts, node, cpu_pct: second % 100, load1: 0.5 },
    disks: mounts.map((mount, m) => ({ ts, node, mount, fs_type: 'ext4', total_bytes: 1000, used_bytes: second + m, free_bytes: 1000 - second - m })),
    pulse: { ts, node, status: (second % 3 === 0 ? 'degraded' : 'healthy') as 'degraded' | 'healthy', checks: { load: { status: 'healthy' as const, value: 0.5 } } },
  };
};

for (const kind of storesUnderTest()) {
  const open = async (t: test.TestContext) => {
    const opened = await kind.open(t);
    if (!opened) t.skip(`the ${kind.name} store is not available here`);
    return opened;
  };

  test(`${kind.name}: series ingest stores each sample once by node and ts (a batch sent again, overlapping batches); reads of one node, one mount, or both`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const { series } = opened.store;
    const batch = [sampleAt('a', 1), sampleAt('b', 1), sampleAt('a', 2), sampleAt('c', 2, ['/'])];
    assert.deepEqual(await series.ingest(batch), { stored: 4, duplicates: 0 });
    assert.deepEqual(await series.ingest(batch), { stored: 0, duplicates: 4 });
    // Overlapping: two already stored, two new, one of them twice in the batch.
    assert.deepEqual(await series.ingest([sampleAt('a', 2), sampleAt('b', 1), sampleAt('b', 3), sampleAt('a', 4), sampleAt('b', 3)]), { stored: 2, duplicates: 3 });

    const trendsOf = async (node?: string) => (await series.newest('trends', 100, node === undefined ? undefined : { node })).items.map((r) => `${r.node}@${String(r.ts).slice(17, 19)}`);
    // Every node, newest first as written; each sample once.
    assert.deepEqual(await trendsOf(), ['a@04', 'b@03', 'c@02', 'a@02', 'b@01', 'a@01']);
    assert.deepEqual(await trendsOf('a'), ['a@04', 'a@02', 'a@01']);
    assert.deepEqual(await trendsOf('c'), ['c@02']);
    assert.deepEqual(await trendsOf('nobody'), []);
    const page = await series.newest('trends', 2, { node: 'a' });
    assert.deepEqual({ count: page.count, limit: page.limit, skipped: page.skipped_lines }, { count: 2, limit: 2, skipped: 0 });
    assert.deepEqual(page.items[0], sampleAt('a', 4).trend, 'the trend point as sent, field for field');

    const disks = async (where: { node?: string; mount?: string }, limit = 100) => (await series.newest('disk', limit, where)).items.map((r) => `${r.node}@${String(r.ts).slice(17, 19)}${r.mount}`);
    assert.deepEqual(await disks({ node: 'b' }), ['b@03/data', 'b@03/', 'b@01/data', 'b@01/']);
    assert.deepEqual(await disks({ mount: '/data' }), ['a@04/data', 'b@03/data', 'a@02/data', 'b@01/data', 'a@01/data']);
    assert.deepEqual(await disks({ node: 'a', mount: '/' }), ['a@04/', 'a@02/', 'a@01/']);
    assert.deepEqual(await disks({ node: 'c', mount: '/data' }), []);
    assert.deepEqual(await disks({}, 3), ['a@04/data', 'a@04/', 'b@03/data']);
    assert.deepEqual((await series.newest('pulse', 1, { node: 'b' })).items.map((r) => r.status), ['degraded']);
    assert.deepEqual((await series.newest('pulse', 100)).items.length, 6);

    assert.deepEqual(await series.nodes(), ['a', 'b', 'c']);
  });

  test(`${kind.name}: series ingest by two writers at once stores each sample once; the heartbeat takes each node's newest sample and keeps the other entries`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const other = await opened.another();
    // A heartbeat entry of a node that sends nothing (written by its own collector).
    assert.deepEqual(await opened.store.series.mergeHeartbeat({ name: 'quiet', last_seen: '2026-01-01T00:00:00.000Z', status: 'healthy' }), { outcome: 'merged' });
    const samples = Array.from({ length: 40 }, (_, i) => sampleAt(`n${i % 4}`, 10 + i));
    const results = await Promise.all([opened.store.series.ingest(samples), other.series.ingest(samples), other.series.ingest(samples.slice(10, 30))]);
    assert.equal(results.reduce((n, r) => n + r.stored, 0), 40, JSON.stringify(results));
    assert.equal(results.reduce((n, r) => n + r.duplicates, 0), 60, JSON.stringify(results));
    for (const store of [opened.store, other]) {
      const items = (await store.series.newest('trends', 1000)).items;
      assert.equal(items.length, 40);
      assert.equal(new Set(items.map((r) => `${r.node} ${r.ts}`)).size, 40);
      assert.equal((await store.series.newest('disk', 1000)).items.length, 80);
      assert.equal((await store.series.newest('pulse', 1000, { node: 'n1' })).items.length, 10);
    }

    const heartbeatNodes = async () => {
      const doc = await opened.store.series.heartbeat();
      assert.equal(doc.error, null);
      return Object.fromEntries((doc.data as { nodes: { name: string; last_seen: string; status: string }[] }).nodes.map((n) => [n.name, `${n.last_seen} ${n.status}`]));
    };
    const expected = {
      quiet: '2026-01-01T00:00:00.000Z healthy',
      n0: `${sampleAt('n0', 46).trend.ts} ${sampleAt('n0', 46).pulse.status}`,
      n1: `${sampleAt('n1', 47).trend.ts} ${sampleAt('n1', 47).pulse.status}`,
      n2: `${sampleAt('n2', 48).trend.ts} ${sampleAt('n2', 48).pulse.status}`,
      n3: `${sampleAt('n3', 49).trend.ts} ${sampleAt('n3', 49).pulse.status}`,
    };
    assert.deepEqual(await heartbeatNodes(), expected);
    // A late sample (older than the entry) leaves the entry as it is; a newer one moves it.
    assert.deepEqual(await other.series.ingest([sampleAt('n0', 5)]), { stored: 1, duplicates: 0 });
    assert.deepEqual(await heartbeatNodes(), expected);
    await other.series.ingest([sampleAt('n0', 60)]);
    assert.deepEqual(await heartbeatNodes(), { ...expected, n0: `${sampleAt('n0', 60).trend.ts} ${sampleAt('n0', 60).pulse.status}` });
  });

  test(`${kind.name}: series pages and restore carry every record to another store once; restoreHeartbeat never replaces another heartbeat`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const target = await kind.open(t);
    if (!target) return;
    const { series } = opened.store;
    await series.ingest(Array.from({ length: 25 }, (_, i) => sampleAt(`n${i % 3}`, i)));
    const copy = async () => {
      const counts: Record<string, { created: number; present: number; pages: number }> = {};
      for (const name of ['trends', 'disk', 'pulse'] as const) {
        counts[name] = { created: 0, present: 0, pages: 0 };
        for await (const page of series.pages(name, 10)) {
          assert.ok(page.records.length <= 10);
          const result = await target.store.series.restore(name, page.records);
          counts[name].created += result.created;
          counts[name].present += result.present;
          counts[name].pages++;
        }
      }
      return counts;
    };
    assert.deepEqual(await copy(), { trends: { created: 25, present: 0, pages: 3 }, disk: { created: 50, present: 0, pages: 5 }, pulse: { created: 25, present: 0, pages: 3 } });
    assert.deepEqual(await copy(), { trends: { created: 0, present: 25, pages: 3 }, disk: { created: 0, present: 50, pages: 5 }, pulse: { created: 0, present: 25, pages: 3 } });
    for (const name of ['trends', 'disk', 'pulse'] as const) {
      assert.deepEqual((await target.store.series.newest(name, 1000)).items, (await series.newest(name, 1000)).items, name);
      assert.deepEqual((await target.store.series.newest(name, 1000, { node: 'n1' })).items, (await series.newest(name, 1000, { node: 'n1' })).items, name);
    }
    assert.deepEqual(await target.store.series.nodes(), ['n0', 'n1', 'n2']);
    // Another tool's record (no node): stored as it is, in reads of every node only.
    const other = { ts: '2026-02-01T00:00:00.000Z', load: 3, tool: 'other' };
    assert.deepEqual(await target.store.series.restore('trends', [other, sampleAt('n0', 3).trend]), { created: 1, present: 1 });
    assert.deepEqual((await target.store.series.newest('trends', 1)).items, [other]);
    assert.deepEqual(await target.store.series.nodes(), ['n0', 'n1', 'n2']);
    // Stored once by its content, field for field as stored: equal text is the record there (twice in one call, once); the same fields in another order are another record.
    assert.deepEqual(await target.store.series.restore('trends', [{ ...other }, JSON.parse(JSON.stringify(other))]), { created: 0, present: 2 });
    const reordered = { tool: 'other', load: 3, ts: other.ts };
    assert.deepEqual(await target.store.series.restore('trends', [reordered, { ...reordered }]), { created: 1, present: 1 });
    assert.deepEqual((await target.store.series.newest('trends', 3)).items, [reordered, other, (await series.newest('trends', 1)).items[0]]);

    const heartbeat = (await series.heartbeat()).data;
    assert.ok(heartbeat, 'ingest made a heartbeat');
    assert.equal(await target.store.series.restoreHeartbeat(heartbeat), 'created');
    assert.deepEqual((await target.store.series.heartbeat()).data, heartbeat);
    assert.equal(await target.store.series.restoreHeartbeat(JSON.parse(JSON.stringify(heartbeat))), 'present');
    assert.equal(await target.store.series.restoreHeartbeat({ nodes: [{ name: 'else', last_seen: '2026-01-01T00:00:00.000Z', status: 'healthy' }] }), 'conflict');
    assert.deepEqual((await target.store.series.heartbeat()).data, heartbeat, 'another heartbeat is never written over');
  });

  test(`${kind.name}: series range: buckets from the raw records and from the rollups alike, per node and mount; a pruned range from a rollup`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const { series } = opened.store;
    // Recent enough for every rollup retention: an hour two days ago, a sample every 20 s for 4 minutes.
    const base = Math.floor((Date.now() - 2 * 86_400_000) / 3_600_000) * 3_600_000;
    const ts = (s: number) => new Date(base + s * 1000).toISOString();
    const samples = ['a', 'b'].flatMap((node) =>
      Array.from({ length: 12 }, (_, i) => ({
        trend: { ts: ts(i * 20), node, cpu_pct: i, mem_used_pct: 50 },
        disks: ['/', '/srv'].map((mount) => ({ ts: ts(i * 20), node, mount, fs_type: 'ext4', total_bytes: 100, used_bytes: mount === '/' ? i : 2 * i, free_bytes: 100 - i })),
        pulse: { ts: ts(i * 20), node, status: 'healthy' as const, checks: {} },
      })),
    );
    await series.ingest(samples);
    const minute = (k: number, count: number, stats: Record<string, [number, number, number]>) => ({
      ts: ts(k * 60),
      count,
      min: Object.fromEntries(Object.entries(stats).map(([f, v]) => [f, v[0]])),
      mean: Object.fromEntries(Object.entries(stats).map(([f, v]) => [f, v[1]])),
      max: Object.fromEntries(Object.entries(stats).map(([f, v]) => [f, v[2]])),
    });
    const query = (fromS: number, toS: number, points: number, extra: object = {}) => ({ fromMs: base + fromS * 1000, toMs: base + toS * 1000, points, ...extra });
    // Raw (a step of seconds): one sample of node a per 20 s bucket.
    const raw = await series.range('trends', query(0, 60, 30, { node: 'a', fields: ['cpu_pct'] }));
    assert.equal(raw.tier, 'raw');
    assert.equal(raw.step_s, 2);
    assert.deepEqual(raw.items.map((i) => [i.ts, i.count, i.mean.cpu_pct]), [[ts(0), 1, 0], [ts(20), 1, 1], [ts(40), 1, 2]]);

    for (const name of ['trends', 'disk'] as const) assert.equal((await series.rebuildRollups(name)).records, 24 * (name === 'disk' ? 2 : 1));
    const expected = [0, 1, 2, 3].map((k) => minute(k, 3, { cpu_pct: [3 * k, 3 * k + 1, 3 * k + 2], mem_used_pct: [50, 50, 50] }));
    const trends = await series.range('trends', query(0, 240, 4, { node: 'a' }));
    assert.deepEqual(trends, { from: ts(0), to: ts(240), step_s: 60, tier: '1m', items: expected });
    const both = await series.range('trends', query(0, 240, 4, { fields: ['cpu_pct'] }));
    assert.deepEqual(both.items.map((i) => [i.count, i.min.cpu_pct, i.max.cpu_pct]), [[6, 0, 2], [6, 3, 5], [6, 6, 8], [6, 9, 11]]);
    const disk = await series.range('disk', query(0, 240, 4, { node: 'b', mount: '/srv', fields: ['used_bytes'] }));
    assert.equal(disk.tier, '1m');
    assert.deepEqual(disk.items, [0, 1, 2, 3].map((k) => minute(k, 3, { used_bytes: [6 * k, 6 * k + 2, 6 * k + 4] })));
    const mounts = await series.range('disk', query(0, 240, 1, { node: 'b', fields: ['used_bytes'] }));
    assert.deepEqual(mounts.items.map((i) => [i.count, i.min.used_bytes, i.mean.used_bytes, i.max.used_bytes]), [[24, 0, 8.25, 22]]);
    assert.deepEqual(mounts.items.map((i) => i.ts), [new Date(Math.floor(base / 300_000) * 300_000).toISOString()]);

    // The raw records pruned: a step of seconds is answered from the 1m rollup, at its width.
    await series.prune('trends', new Date());
    const pruned = await series.range('trends', query(0, 60, 30, { node: 'a' }));
    assert.deepEqual(pruned, { from: ts(0), to: ts(60), step_s: 60, tier: '1m', items: [expected[0]] });
    assert.deepEqual((await series.range('trends', query(0, 240, 4, { node: 'a' }))).items, expected);
  });
}
