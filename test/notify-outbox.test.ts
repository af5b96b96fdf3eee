import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { DeliveryAttempt, NewDelivery } from '../src/core/notify/outbox-types.ts';
import { storesUnderTest } from './helpers/stores.ts';

// Store.outbox, the same behaviour from every store (the data dir's state
// file; PostgreSQL's notify_deliveries): each delivery once by id, a lease
// held by one claimant at a time, an attempt recorded only by its holder.

const T0 = Date.parse('2026-12-01T10:00:00.000Z');
const at = (s: number) => new Date(T0 + s * 1000);

function delivery(n: number, target = 'hook'): NewDelivery {
  return {
    id: `msg_${String(n).padStart(32, '0')}`,
    target,
    type: 'schedule_down',
    subject: `job-${n}`,
    event_ts: at(n).toISOString(),
    body: JSON.stringify({ type: 'schedule_down', n }),
    created_at: at(n).toISOString(),
    expires_at: at(n + 3600).toISOString(),
  };
}

const failed = (s: number): DeliveryAttempt => ({ at: at(s).toISOString(), http_status: 500, error: 'HTTP 500', duration_ms: 3 });
const ok = (s: number): DeliveryAttempt => ({ at: at(s).toISOString(), http_status: 204, error: null, duration_ms: 2 });

for (const kind of storesUnderTest()) {
  test(`${kind.name}: outbox`, async (t) => {
    const opened = await kind.open(t);
    if (!opened) return t.skip(`${kind.name} store not available here`);
    const { store } = opened;
    const other = await opened.another();

    await t.test('targetSince: the first time stored wins, for every process', async () => {
      assert.equal((await store.outbox.targetSince('hook', at(0))).toISOString(), at(0).toISOString());
      assert.equal((await other.outbox.targetSince('hook', at(50))).toISOString(), at(0).toISOString());
      assert.equal((await other.outbox.targetSince('other', at(50))).toISOString(), at(50).toISOString());
    });

    await t.test('enqueue stores each delivery once by id, whoever enqueues it', async () => {
      assert.equal(await store.outbox.enqueue([delivery(1), delivery(2)]), 2);
      const again = await Promise.all([store.outbox.enqueue([delivery(2), delivery(3)]), other.outbox.enqueue([delivery(3), delivery(1)])]);
      assert.equal(again[0] + again[1], 1, 'delivery 3 stored once between two concurrent enqueuers');
      const listed = await other.outbox.recent(10);
      assert.deepEqual(listed.map((d) => d.id), [delivery(3).id, delivery(2).id, delivery(1).id]);
      assert.deepEqual(
        [listed[2]?.status, listed[2]?.attempt_count, listed[2]?.next_at, listed[2]?.body, listed[2]?.expires_at],
        ['pending', 0, at(1).toISOString(), delivery(1).body, at(3601).toISOString()],
      );
    });

    // Who holds each of deliveries 1–3 after the first claims.
    const holder = new Map<string, string>();

    await t.test('claim: two claimants at once take disjoint deliveries; a leased one is not claimed again while its lease lasts', async () => {
      const [a, b] = await Promise.all([store.outbox.claim('a', ['hook'], 2, at(10), 30_000), other.outbox.claim('b', ['hook'], 2, at(10), 30_000)]);
      const ids = [...a, ...b].map((d) => d.id).sort();
      assert.deepEqual(ids, [delivery(1).id, delivery(2).id, delivery(3).id], JSON.stringify({ a: a.map((d) => d.id), b: b.map((d) => d.id) }));
      assert.equal(new Set(ids).size, 3, 'no delivery leased twice');
      assert.deepEqual(await store.outbox.claim('c', ['hook'], 5, at(20), 30_000), [], 'all leased for 30 s');
      for (const d of a) holder.set(d.id, 'a');
      for (const d of b) holder.set(d.id, 'b');
    });

    await t.test('finish: an attempt by the holder is recorded; a retry is claimable at its next_at, not before; a lease that ran out passes to the next claimant', async () => {
      const [d1, d2, d3] = [delivery(1).id, delivery(2).id, delivery(3).id];
      const by = (id: string) => holder.get(id) ?? '';
      assert.equal(await store.outbox.finish(d1, by(d1), failed(42), { status: 'pending', next_at: at(50).toISOString() }), true);
      assert.equal(await store.outbox.finish(d2, by(d2), ok(42), { status: 'delivered' }), true);
      assert.equal(await store.outbox.finish(d3, by(d3), failed(42), { status: 'failed' }), true);
      assert.equal(await store.outbox.finish(d3, by(d3), ok(43), { status: 'delivered' }), false, 'a finished delivery stays as it is');
      assert.deepEqual(await other.outbox.claim('d', ['hook'], 5, at(49), 30_000), []);
      // A lease of 0 ms is over as soon as it is taken, by the store's clock (the data dir's: `now`; PostgreSQL's: its own).
      const retried = await other.outbox.claim('d', ['hook'], 5, at(50), 0);
      assert.deepEqual(retried.map((d) => [d.id, d.attempt_count, d.attempts.map((x) => x.http_status)]), [[d1, 1, [500]]]);
      assert.deepEqual((await store.outbox.claim('e', ['hook'], 5, at(50), 30_000)).map((d) => d.id), [d1], "d's lease ran out: e takes it");
      assert.equal(await other.outbox.finish(d1, 'd', ok(51), { status: 'delivered' }), false, 'an expired lease records nothing');
      assert.equal(await store.outbox.finish(d1, 'e', ok(51), { status: 'delivered' }), true);
      const listed = await store.outbox.recent(10);
      assert.deepEqual(
        listed.map((d) => [d.id, d.status, d.attempt_count, d.delivered_at, d.next_at, d.lease_owner]),
        [
          [d3, 'failed', 1, null, null, null],
          [d2, 'delivered', 1, at(42).toISOString(), null, null],
          [d1, 'delivered', 2, at(51).toISOString(), null, null],
        ],
      );
      assert.deepEqual(listed[2]?.attempts, [failed(42), ok(51)]);
      assert.deepEqual((await store.outbox.recent(10, { status: 'failed' })).map((d) => d.id), [d3]);
      assert.deepEqual((await store.outbox.recent(1)).map((d) => d.id), [d3]);
    });

    await t.test('recent by target; prune drops finished deliveries created before the cutoff, never pending ones', async () => {
      await store.outbox.enqueue([delivery(4, 'other'), delivery(5, 'hook')]);
      assert.deepEqual((await store.outbox.recent(10, { target: 'other' })).map((d) => d.id), [delivery(4).id]);
      assert.equal(await store.outbox.prune(at(3)), 2, 'deliveries 1 and 2: finished, created before 3 s');
      assert.equal(await store.outbox.prune(at(100)), 1, 'delivery 3; 4 and 5 are pending');
      assert.deepEqual((await other.outbox.recent(10)).map((d) => d.id), [delivery(5).id, delivery(4).id]);
      assert.deepEqual((await store.outbox.claim('e', ['hook'], 5, at(200), 30_000)).map((d) => d.id), [delivery(5).id], 'a claimant takes only its own targets\' deliveries');
      assert.deepEqual((await store.outbox.claim('e', ['elsewhere'], 5, at(200), 30_000)).map((d) => d.id), []);
      assert.equal(await store.outbox.prune(at(3604)), 0, 'pending, not expired before the cutoff');
      assert.equal(await store.outbox.prune(at(3605)), 1, 'delivery 4 of a target no one claims any more, expired: dropped');
      assert.deepEqual((await other.outbox.recent(10)).map((d) => d.id), [delivery(5).id]);
    });
  });
}

for (const kind of storesUnderTest()) {
  test(`estate store copy carries the outbox, data dir → ${kind.name}: each delivery once by id, with its attempts, and each target's start`, async (t) => {
    const { copyStore } = await import('../src/core/store/copy-store.ts');
    const source = await storesUnderTest()[0]?.open(t);
    const dest = await kind.open(t);
    if (!source || !dest) return t.skip(`${kind.name} store not available here`);
    await source.store.outbox.targetSince('hook', at(0));
    await source.store.outbox.enqueue([delivery(1), delivery(2)]);
    const [claimed] = await source.store.outbox.claim('a', ['hook'], 1, at(10), 30_000);
    assert.ok(claimed);
    await source.store.outbox.finish(claimed.id, 'a', ok(11), { status: 'delivered' });
    await dest.store.outbox.targetSince('other', at(99));

    const report = await copyStore(source.store, dest.store);
    assert.deepEqual([report.notify_outbox.copied, report.notify_outbox.already_there], [2, 0]);
    const copied = await dest.store.outbox.recent(10);
    assert.deepEqual(copied, await source.store.outbox.recent(10));
    assert.deepEqual((await dest.store.outbox.targets()).sort((a, b) => a.target.localeCompare(b.target)), [
      { target: 'hook', since: at(0).toISOString() },
      { target: 'other', since: at(99).toISOString() },
    ]);
    const again = await copyStore(source.store, dest.store);
    assert.deepEqual([again.notify_outbox.copied, again.notify_outbox.already_there], [0, 2]);
  });
}

test('data dir: finished deliveries trimmed past MAX_FINISHED are still known by id: the same events again enqueue nothing', async (t) => {
  const { tempDataDir } = await import('./helpers/data-dir.ts');
  const { createDataDirStore } = await import('../src/core/store/data-dir-store.ts');
  const { MAX_FINISHED } = await import('../src/core/notify/data-dir-outbox.ts');
  const store = createDataDirStore(await tempDataDir(t));
  t.after(() => store.close());
  const count = MAX_FINISHED + 100;
  const all = Array.from({ length: count }, (_, n) => delivery(n));
  assert.equal(await store.outbox.enqueue(all), count);
  for (let done = 0; done < count; ) {
    const claimed = await store.outbox.claim('me', ['hook'], 500, at(4000), 60_000);
    for (const d of claimed) assert.equal(await store.outbox.finish(d.id, 'me', ok(4001), { status: 'delivered' }), true);
    done += claimed.length;
    assert.ok(claimed.length > 0);
  }
  assert.equal(await store.outbox.enqueue(all), 0, 'none is enqueued again, trimmed or not');
  // Prune forgets them with the rest, once past the cutoff.
  await store.outbox.prune(at(count + 10));
  assert.equal(await store.outbox.enqueue([delivery(0)]), 1);
});
