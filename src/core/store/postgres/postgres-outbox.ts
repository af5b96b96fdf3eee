import { type Delivery, type DeliveryAttempt, MAX_KEPT_ATTEMPTS, type Outbox } from '../../notify/outbox-types.ts';
import { withinDeadline, type Sql } from './connect.ts';

// The webhook outbox in `notify_deliveries` and `notify_targets`
// (migrations.ts, version 8). A claim leases rows with FOR UPDATE SKIP
// LOCKED: replicas claiming at once take disjoint rows, and a row is
// claimable again only once its lease has run out by the database's clock
// (the one clock every replica shares), so one replica at a time attempts a
// delivery. An attempt is recorded only by the lease's holder.

type Row = Record<string, unknown>;

const iso = (v: unknown): string | null => (v === null || v === undefined ? null : new Date(v as string | Date).toISOString());

function deliveryOf(row: Row): Delivery {
  return {
    id: String(row.id),
    target: String(row.target),
    type: String(row.type),
    subject: String(row.subject),
    event_ts: String(row.event_ts),
    body: String(row.body),
    created_at: iso(row.created_at) as string,
    expires_at: iso(row.expires_at) as string,
    status: row.status as Delivery['status'],
    attempt_count: Number(row.attempt_count),
    attempts: (row.attempts ?? []) as DeliveryAttempt[],
    next_at: iso(row.next_at),
    delivered_at: iso(row.delivered_at),
    lease_owner: (row.lease_owner as string | null) ?? null,
    lease_until: iso(row.lease_until),
  };
}

export function postgresOutbox(sql: Sql, store: string): Outbox {
  const run = <T>(work: () => Promise<T>) => withinDeadline(store, work);
  return {
    targetSince: (target, at) =>
      run(async () => {
        await sql`INSERT INTO notify_targets (target, since) VALUES (${target}, ${at}) ON CONFLICT (target) DO NOTHING`;
        const [row] = await sql`SELECT since FROM notify_targets WHERE target = ${target}`;
        return new Date(row?.since as Date);
      }),
    targets: () =>
      run(async () => {
        const rows = await sql`SELECT target, since FROM notify_targets ORDER BY target`;
        return rows.map((row) => ({ target: String(row.target), since: iso(row.since) as string }));
      }),
    enqueue: (deliveries) =>
      run(async () => {
        const batch = firstOfEachId(deliveries);
        if (batch.length === 0) return 0;
        // One statement. Most scans find every delivery stored already: NOT EXISTS skips those before an insert (or a
        // sequence value) is spent on them; ON CONFLICT skips the ones another enqueuer stores meanwhile. Rows go in
        // by (event_ts, id), an order every enqueuer shares, so two replicas enqueuing the same deliveries at once
        // wait on each other's rows in the same order and never deadlock.
        const rows = await sql`INSERT INTO notify_deliveries (id, target, type, subject, event_ts, body, created_at, expires_at, status, next_at)
          SELECT d->>'id', d->>'target', d->>'type', d->>'subject', d->>'event_ts', d->>'body', (d->>'created_at')::timestamptz, (d->>'expires_at')::timestamptz, 'pending', (d->>'created_at')::timestamptz
          FROM jsonb_array_elements(${sql.json(batch as never)}::jsonb) AS d
          WHERE NOT EXISTS (SELECT 1 FROM notify_deliveries n WHERE n.id = d->>'id')
          ORDER BY d->>'event_ts' COLLATE "C", d->>'id' COLLATE "C"
          ON CONFLICT (id) DO NOTHING RETURNING id`;
        return rows.length;
      }),
    // The lease is the database's: set from clock_timestamp() (when the claim takes the row) and tested against
    // now(), so replicas whose clocks disagree still agree on whether a lease is live, and none takes another's.
    // `now` is the claimant's own time, for what that time set: next_at (a retry's due time, from its attempt's
    // time on the replica that made it) and created_at. A skewed clock can move when a delivery is due, never
    // who holds it.
    claim: (owner, targets, limit, now, leaseMs) =>
      run(async () => {
        if (limit <= 0 || targets.length === 0) return [];
        const rows = await sql`UPDATE notify_deliveries d SET lease_owner = ${owner}, lease_until = clock_timestamp() + ${leaseMs}::double precision * interval '1 millisecond'
          FROM (
            SELECT id FROM notify_deliveries
            WHERE status = 'pending' AND target = ANY(${targets as string[]}::text[]) AND next_at <= ${now} AND (lease_until IS NULL OR lease_until <= now())
            ORDER BY next_at, seq LIMIT ${limit}
            FOR UPDATE SKIP LOCKED
          ) c
          WHERE d.id = c.id
          RETURNING d.*`;
        return rows.map(deliveryOf).sort((a, b) => Date.parse(a.next_at as string) - Date.parse(b.next_at as string));
      }),
    finish: (id, owner, attempt, result) =>
      run(async () => {
        const next = result.status === 'pending' ? new Date(result.next_at) : null;
        const delivered = result.status === 'delivered' ? new Date(attempt.at) : null;
        const entry = sql.json([attempt] as never);
        const rows = await sql`UPDATE notify_deliveries SET
            status = ${result.status},
            attempt_count = attempt_count + 1,
            attempts = CASE WHEN jsonb_array_length(attempts) >= ${MAX_KEPT_ATTEMPTS} THEN (attempts - 0) ELSE attempts END || ${entry}::jsonb,
            next_at = ${next},
            delivered_at = ${delivered},
            lease_owner = NULL,
            lease_until = NULL
          WHERE id = ${id} AND lease_owner = ${owner} AND status = 'pending'
          RETURNING id`;
        return rows.length > 0;
      }),
    recent: (limit, where = {}) =>
      run(async () => {
        const target = where.target ?? null;
        const status = where.status ?? null;
        const rows = await sql`SELECT * FROM notify_deliveries
          WHERE (${target}::text IS NULL OR target = ${target}) AND (${status}::text IS NULL OR status = ${status})
          ORDER BY seq DESC LIMIT ${limit}`;
        return rows.map(deliveryOf);
      }),
    prune: (before) =>
      run(async () => {
        const rows = await sql`DELETE FROM notify_deliveries
          WHERE (status <> 'pending' AND created_at < ${before}) OR (status = 'pending' AND expires_at < ${before}) RETURNING id`;
        return rows.length;
      }),
    pages: async function* (pageSize) {
      let after = 0;
      for (;;) {
        const from = after;
        const rows = await run(() => sql`SELECT * FROM notify_deliveries WHERE seq > ${from} ORDER BY seq LIMIT ${pageSize}`);
        const last = rows.at(-1);
        if (!last) return;
        after = Number(last.seq);
        yield rows.map(deliveryOf);
        if (rows.length < pageSize) return;
      }
    },
    restore: (deliveries) =>
      run(async () => {
        const batch = firstOfEachId(deliveries);
        if (batch.length === 0) return { created: 0, present: 0 };
        // One statement, in the order given (a copy keeps its source's order); a lease is never carried. Beside an
        // enqueuer of the same ids in another order, PostgreSQL may end a deadlock by failing one: both can run again.
        const rows = await sql`INSERT INTO notify_deliveries (id, target, type, subject, event_ts, body, created_at, expires_at, status, attempt_count, attempts, next_at, delivered_at)
          SELECT d->>'id', d->>'target', d->>'type', d->>'subject', d->>'event_ts', d->>'body', (d->>'created_at')::timestamptz, (d->>'expires_at')::timestamptz, d->>'status',
            (d->>'attempt_count')::integer, d->'attempts', (d->>'next_at')::timestamptz, (d->>'delivered_at')::timestamptz
          FROM jsonb_array_elements(${sql.json(batch as never)}::jsonb) WITH ORDINALITY AS e(d, n)
          WHERE NOT EXISTS (SELECT 1 FROM notify_deliveries x WHERE x.id = d->>'id')
          ORDER BY n
          ON CONFLICT (id) DO NOTHING RETURNING id`;
        return { created: rows.length, present: deliveries.length - rows.length };
      }),
  };
}

/** The first delivery of each id, in order: a batch names an id once (the repeats count as there already). */
function firstOfEachId<T extends { id: string }>(deliveries: readonly T[]): T[] {
  const seen = new Set<string>();
  return deliveries.filter((d) => !seen.has(d.id) && seen.add(d.id));
}
