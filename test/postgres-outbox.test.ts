import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { Delivery, NewDelivery } from '../src/core/notify/outbox-types.ts';
import { loadDriver } from '../src/core/store/postgres/connect.ts';
import { migrateStore } from '../src/core/store/postgres/migrate.ts';
import { postgresOutbox } from '../src/core/store/postgres/postgres-outbox.ts';
import { VERSION } from '../src/version.ts';
import { startPostgres } from './helpers/postgres.ts';

// The PostgreSQL outbox (postgres-outbox.ts) on a real server, where what
// PostgreSQL does is the point: a lease is set from and tested against the
// database's clock, so replicas whose clocks disagree never take each
// other's live leases; enqueue and restore send one statement for a batch.
// The behaviour every store shares is test/notify-outbox.test.ts.

const HOUR = 3_600_000;
const LEASE_MS = 30_000;

/** Two replicas' outboxes on one fresh database, each on its own pool; every statement either sends is in `queries`. */
async function replicas(t: TestContext) {
  const pg = await startPostgres(t);
  if (!pg) return undefined;
  await migrateStore(pg.url, {}, VERSION);
  const driver = await loadDriver();
  const queries: string[] = [];
  const pool = async () => {
    const sql = driver(pg.url, { max: 1, onnotice: () => {}, debug: (_connection, query) => queries.push(query) });
    t.after(() => sql.end({ timeout: 5 }));
    // Connected (and the driver's own start-up queries made) before anything is counted.
    await sql`SELECT 1`;
    return sql;
  };
  const [sqlA, sqlB] = [await pool(), await pool()];
  return { a: postgresOutbox(sqlA, 'postgres'), b: postgresOutbox(sqlB, 'postgres'), sql: sqlA, queries };
}

let serial = 0;
/** A delivery of `target`, made two hours ago (so due for every clock below), as an enqueuer would make it. */
function delivery(target: string, extra: Partial<NewDelivery> = {}): NewDelivery {
  const created = new Date(Date.now() - 2 * HOUR).toISOString();
  const n = ++serial;
  return { id: `msg_${n.toString(16).padStart(32, '0')}`, target, type: 'node_stale', subject: `node-${n}`, event_ts: created, body: `{"n":${n}}`, created_at: created, expires_at: new Date(Date.now() + 2 * HOUR).toISOString(), ...extra };
}

const clock = (offsetMs: number) => new Date(Date.now() + offsetMs);

test('postgres outbox: leases by the database clock', async (t) => {
  const opened = await replicas(t);
  if (!opened) return t.skip('no PostgreSQL here');
  const { a, b } = opened;

  // [replica A's clock, replica B's clock], off the database's by so much.
  const SKEWS: [string, number, number][] = [
    ['B an hour ahead', 0, HOUR],
    ['A an hour behind', -HOUR, 0],
    ['A an hour behind and B an hour ahead', -HOUR, HOUR],
    ['A an hour ahead and B right', HOUR, 0],
  ];
  for (const [name, offA, offB] of SKEWS) {
    await t.test(`${name}: B claims none of A's live leases, and A's lease runs ${LEASE_MS} ms from the database's now`, async () => {
      const target = `skew-${serial}`;
      const mine = [delivery(target), delivery(target)];
      assert.equal(await a.enqueue(mine), 2);
      const before = Date.now();
      const claimed = await a.claim('a', [target], 5, clock(offA), LEASE_MS);
      const after = Date.now();
      assert.deepEqual(claimed.map((d) => d.id).sort(), mine.map((d) => d.id).sort());
      for (const d of claimed) {
        const until = Date.parse(d.lease_until ?? '');
        // One host: the database's clock is this process's, give or take rounding.
        assert.ok(until >= before + LEASE_MS - 5 && until <= after + LEASE_MS + 5, `lease_until ${d.lease_until} is ${LEASE_MS} ms after the claim by the database's clock, not A's (${clock(offA).toISOString()})`);
      }
      assert.deepEqual(await b.claim('b', [target], 5, clock(offB), LEASE_MS), [], 'A holds them, whatever B\'s clock says');
      for (const d of claimed) assert.equal(await a.finish(d.id, 'a', { at: clock(offA).toISOString(), http_status: 204, error: null, duration_ms: 1 }, { status: 'delivered' }), true);
    });
  }

  await t.test('a lease over by the database\'s clock is claimed by a replica whose clock is behind; the old holder then records nothing', async () => {
    const target = `expired-${serial}`;
    const [d] = [delivery(target)];
    assert.ok(d);
    await a.enqueue([d]);
    // A lease of 0 ms: over as soon as it is taken.
    assert.deepEqual((await a.claim('a', [target], 1, clock(0), 0)).map((x) => x.id), [d.id]);
    assert.deepEqual((await b.claim('b', [target], 1, clock(-HOUR), LEASE_MS)).map((x) => x.id), [d.id], 'B\'s clock is behind A\'s lease by its own time, not by the database\'s');
    const ok = { at: clock(0).toISOString(), http_status: 204, error: null, duration_ms: 1 };
    assert.equal(await a.finish(d.id, 'a', ok, { status: 'delivered' }), false);
    assert.equal(await b.finish(d.id, 'b', ok, { status: 'delivered' }), true);
  });

  await t.test('a retry is due by the attempt\'s own time: next_at against the claimant\'s now', async () => {
    const target = `retry-${serial}`;
    const [d] = [delivery(target)];
    assert.ok(d);
    await a.enqueue([d]);
    const at = Date.now();
    await a.claim('a', [target], 1, new Date(at), LEASE_MS);
    const next = new Date(at + HOUR).toISOString();
    assert.equal(await a.finish(d.id, 'a', { at: new Date(at).toISOString(), http_status: 500, error: 'HTTP 500', duration_ms: 1 }, { status: 'pending', next_at: next }), true);
    assert.deepEqual(await b.claim('b', [target], 1, new Date(at + HOUR - 1), LEASE_MS), []);
    assert.deepEqual((await b.claim('b', [target], 1, new Date(at + HOUR), LEASE_MS)).map((x) => [x.id, x.attempt_count]), [[d.id, 1]]);
  });
});

/** A body with what JSON and array literals must escape. */
const AWKWARD = '{"message":"a \\"quoted\\" {brace}, a comma, \\\\ a backslash, é ü 漢字 🚀\\nline two"}';

test('postgres outbox: enqueue and restore send one statement for a batch, with the same answers', async (t) => {
  const opened = await replicas(t);
  if (!opened) return t.skip('no PostgreSQL here');
  const { a, b, sql, queries } = opened;
  const sent = async <T>(work: () => Promise<T>): Promise<{ answer: T; statements: number }> => {
    const from = queries.length;
    const answer = await work();
    return { answer, statements: queries.length - from };
  };
  const sequence = async () => Number((await sql`SELECT last_value FROM notify_deliveries_seq_seq`)[0]?.last_value);

  await t.test('enqueue: one statement; answers how many were new, a repeat within the batch once', async () => {
    assert.deepEqual(await sent(() => a.enqueue([])), { answer: 0, statements: 0 });
    const first = Array.from({ length: 50 }, (_, i) => delivery('hook', { event_ts: new Date(Date.parse('2026-12-01T10:00:00.000Z') + i * 1000).toISOString(), ...(i === 7 ? { body: AWKWARD } : {}) }));
    assert.deepEqual(await sent(() => a.enqueue(first)), { answer: 50, statements: 1 });
    const more = [delivery('hook'), delivery('hook')];
    const batch = [...first.slice(0, 10), more[0] as NewDelivery, more[0] as NewDelivery, ...first.slice(40), more[1] as NewDelivery];
    assert.deepEqual(await sent(() => a.enqueue(batch)), { answer: 2, statements: 1 });
    const seq = await sequence();
    assert.deepEqual(await sent(() => b.enqueue(first)), { answer: 0, statements: 1 }, 'all stored already: one statement');
    assert.equal(await sequence(), seq, 'no sequence value spent on deliveries stored already');

    const listed = (await a.recent(100)).reverse();
    assert.deepEqual(listed.map((d) => d.id), [...first, ...more].map((d) => d.id), 'stored by event time (then id): the order every enqueuer shares');
    assert.deepEqual(
      listed.find((d) => d.id === first[7]?.id),
      { ...first[7], status: 'pending', attempt_count: 0, attempts: [], next_at: first[7]?.created_at, delivered_at: null, lease_owner: null, lease_until: null },
    );
  });

  await t.test('enqueue: two replicas at once, the same deliveries in opposite orders, many times: each stored once, neither fails', async () => {
    for (let round = 0; round < 10; round++) {
      const batch = Array.from({ length: 100 }, () => delivery('race'));
      const [x, y] = await Promise.all([a.enqueue(batch), b.enqueue([...batch].reverse())]);
      assert.equal(x + y, batch.length, `round ${round}: ${x} + ${y}`);
    }
  });

  await t.test('restore: one statement; created and present as before, each delivery as it was, in order', async () => {
    assert.deepEqual(await sent(() => a.restore([])), { answer: { created: 0, present: 0 }, statements: 0 });
    const made = (n: number, status: Delivery['status']): Delivery => {
      const d = delivery('copied', n === 3 ? { body: AWKWARD } : {});
      const at = new Date(Date.parse(d.created_at) + 1000).toISOString();
      return {
        ...d,
        status,
        attempt_count: status === 'pending' ? 1 : 2,
        attempts: [{ at, http_status: 500, error: 'HTTP 500', duration_ms: 12 }, ...(status === 'pending' ? [] : [{ at, http_status: status === 'delivered' ? 204 : null, error: status === 'delivered' ? null : 'timed out after 100 ms', duration_ms: 100 }])],
        next_at: status === 'pending' ? at : null,
        delivered_at: status === 'delivered' ? at : null,
        // A lease is not carried: the copy is nobody's.
        lease_owner: 'elsewhere',
        lease_until: at,
      };
    };
    const copies = Array.from({ length: 20 }, (_, n) => made(n, (['pending', 'delivered', 'failed'] as const)[n % 3] as Delivery['status']));
    const present = (await a.recent(3)).map((d) => ({ ...d, body: 'another body' }));
    const batch = [...copies.slice(0, 10), ...present, copies[4] as Delivery, ...copies.slice(10)];
    assert.deepEqual(await sent(() => a.restore(batch)), { answer: { created: 20, present: 4 }, statements: 1 });
    assert.deepEqual(await sent(() => b.restore(copies)), { answer: { created: 0, present: 20 }, statements: 1 });
    const listed = (await a.recent(20, { target: 'copied' })).reverse();
    assert.deepEqual(listed, copies.map((d) => ({ ...d, lease_owner: null, lease_until: null })));
    assert.notEqual((await a.recent(100)).find((d) => d.id === present[0]?.id)?.body, 'another body', 'a delivery there already stays as it was');
  });
});
