import assert from 'node:assert/strict';
import test from 'node:test';
import type { JsonRecord } from '../src/core/jsonl/parse-record.ts';
import { EstateError } from '../src/errors.ts';
import { storesUnderTest } from './helpers/stores.ts';

// What `estate store copy` (src/core/store/copy-store.ts) needs of every
// Store, run against each (the data dir's, and PostgreSQL's where a server is
// available): reading a store whole a page at a time, and restoring records,
// runs, keys and the token secret made elsewhere, each once, never
// overwriting. The command itself is tested in store-copy.test.ts.

const LIMITS = { maxRunsPerUser: 1, maxParamsBytes: 1024 };
const completion = (n: number, extra: Record<string, unknown> = {}): JsonRecord => ({
  id: `wc_${n.toString(16).padStart(16, '0')}`,
  task_id: `T-${n}`,
  board: n % 2 ? 'ops' : 'web',
  assignee: 'ana',
  title: `Task ${n}`,
  ...extra,
  completed_at: new Date(Date.UTC(2024, 0, 1) + n * 1000).toISOString(),
});

for (const kind of storesUnderTest()) {
  const open = async (t: test.TestContext) => {
    const opened = await kind.open(t);
    if (!opened) t.skip(`the ${kind.name} store is not available here`);
    return opened;
  };

  test(`${kind.name}: restored records keep their ids, times and order; again they are present; another record under the key or id is a conflict`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const { completions } = opened.store;
    const records = [completion(3, { summary: 'ü ✓' }), completion(1), completion(2)];
    const first = await completions.restore(records);
    assert.deepEqual(
      first.map((r) => r.outcome),
      ['created', 'created', 'created'],
    );
    assert.deepEqual((await completions.newest(10)).records, [...records].reverse());
    assert.deepEqual(await completions.get('wc_0000000000000001'), records[1]);
    assert.deepEqual(await completions.since('wc_0000000000000003', 10), records.slice(1));

    const again = await completions.restore([completion(1), completion(3, { summary: 'ü ✓' }), completion(4)]);
    assert.deepEqual(
      again.map((r) => r.outcome),
      ['present', 'present', 'created'],
    );
    const conflicts = await completions.restore([
      completion(1, { title: 'other' }),
      { ...completion(5), id: 'wc_0000000000000002' },
      { ...completion(2), completed_at: '2030-01-01T00:00:00.000Z' },
    ]);
    assert.deepEqual(
      conflicts.map((r) => [r.outcome, r.stored.id]),
      [
        ['conflict', 'wc_0000000000000001'],
        ['conflict', 'wc_0000000000000002'],
        ['conflict', 'wc_0000000000000002'],
      ],
    );
    assert.deepEqual(conflicts[0]?.stored, records[1], 'the stored record, unchanged');
    assert.equal((await completions.newest(10)).records.length, 4);

    // A client's write of a restored key replays against the restored record.
    const replay = await completions.write({ task_id: 'T-4', board: 'web', assignee: 'ana', title: 'Task 4' }, () => new Date());
    assert.deepEqual([replay.outcome, replay.record.id], ['replayed', 'wc_0000000000000004']);

    // Something that is not a record refuses the whole call.
    await assert.rejects(completions.restore([completion(6), { id: 'wc_0000000000000007', task_id: 'T-7' }]), (err: unknown) => err instanceof EstateError && err.code === 'validation');
    assert.equal(await completions.get('wc_0000000000000006'), undefined);
  });

  test(`${kind.name}: pages read every record oldest first, a page at a time`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const { entries } = opened.store;
    assert.deepEqual(await collect(entries.pages(2)), []);
    const written = [];
    for (let i = 0; i < 5; i++) {
      written.push((await entries.write({ title: `Piece ${i}`, slug: `p-${i}`, content_type: 'post', target_site: 'blog' }, () => new Date(Date.UTC(2025, 0, 1, 0, 0, i)))).record);
    }
    const pages = await collect(entries.pages(2));
    assert.deepEqual(
      pages.map((p) => p.records.length),
      [2, 2, 1],
    );
    assert.deepEqual(
      pages.flatMap((p) => p.records),
      written,
    );
  });

  test(`${kind.name}: training runs restore as they were, over the quota, once; another run under the id is a conflict`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const { training } = opened.store;
    const own = await training.create('alice', { name: 'mine' }, LIMITS, new Date('2025-02-01T00:00:00.000Z'));
    const run = { ...own, run_id: 'run_00000000000000aa', name: 'copied', params: { lr: 0.5, layers: [8, 4] }, created_at: '2024-01-01T00:00:00.000Z', updated_at: '2024-01-02T00:00:00.000Z' };
    assert.equal((await training.restore(run)).outcome, 'created', 'restored past the quota of 1');
    assert.deepEqual(await training.get('alice', run.run_id), run);
    assert.equal(await training.get('bob', run.run_id), undefined);
    assert.deepEqual(
      (await training.list('alice')).map((r) => r.run_id),
      [own.run_id, run.run_id],
    );
    assert.equal((await training.restore(run)).outcome, 'present');
    const other = await training.restore({ ...run, user_id: 'bob' });
    assert.deepEqual([other.outcome, other.stored?.user_id], ['conflict', 'alice']);
    assert.equal(await training.get('bob', run.run_id), undefined);

    const all = (await collect(training.pages(1))).flatMap((page) => page.runs);
    assert.deepEqual(
      all.map((r) => r.run_id).sort(),
      [own.run_id, run.run_id].sort(),
    );
  });

  test(`${kind.name}: keys restore with their ids and hashes, and authenticate; another key under the id is a conflict; the token secret restores once`, async (t) => {
    const opened = await open(t);
    if (!opened) return;
    const { credentials, tokenSecret } = opened.store;
    const made = await credentials.create({ userId: 'alice', name: 'laptop' });
    const [mine] = await credentials.all();
    assert.ok(mine);
    assert.match(mine.hash, /^sha256:[0-9a-f]{64}$/);
    const copied = { ...mine, key_id: '0123456789ab', name: 'copied', revoked_at: '2025-01-02T00:00:00.000Z', last_used_at: '2025-01-01T00:00:00.000Z' };
    const results = await credentials.restore([copied, mine]);
    assert.deepEqual(
      results.map((r) => r.outcome),
      ['created', 'present'],
    );
    assert.deepEqual(await credentials.all(), [mine, copied]);
    assert.deepEqual(await credentials.lookup(made.info.key_id), mine);
    // The same key whose use and revocation moved on is still the same key; another hash is not.
    assert.equal((await credentials.restore([{ ...mine, last_used_at: '2026-01-01T00:00:00.000Z', revoked_at: '2026-01-01T00:00:00.000Z' }]))[0]?.outcome, 'present');
    const other = await credentials.restore([{ ...copied, hash: `sha256:${'0'.repeat(64)}` }]);
    assert.deepEqual([other[0]?.outcome, other[0]?.stored.hash], ['conflict', mine.hash]);
    await assert.rejects(credentials.restore([{ ...copied, key_id: 'abcdefabcdef', scopes: ['root' as never] }]), (err: unknown) => err instanceof EstateError && err.code === 'validation');
    assert.equal((await credentials.all()).length, 2);

    const secret = new Uint8Array(32).fill(7);
    const bytes = (b: Uint8Array | undefined) => (b ? [...b] : b);
    const created = await tokenSecret.restore(secret);
    assert.deepEqual([created.outcome, bytes(created.stored)], ['created', [...secret]]);
    assert.deepEqual(bytes(await tokenSecret.ensure()), [...secret]);
    assert.equal((await tokenSecret.restore(secret)).outcome, 'present');
    const another = await tokenSecret.restore(new Uint8Array(32).fill(9));
    assert.deepEqual([another.outcome, bytes(another.stored)], ['conflict', [...secret]]);
    assert.deepEqual(bytes(await tokenSecret.ensure()), [...secret]);
  });
}

async function collect<T>(pages: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const page of pages) out.push(page);
  return out;
}
