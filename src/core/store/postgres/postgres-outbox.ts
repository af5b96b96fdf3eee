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
        if (deliveries.length === 0) return 0;
        // Most scans find every delivery stored already: one read, and no insert (nor a sequence value) spent on them.
        const ids = deliveries.map((d) => d.id);
        const known = new Set((await sql`SELECT id FROM notify_deliveries WHERE id = ANY(${ids}::text[])`).map((row) => String(row.id)));
        let added = 0;
        for (const d of deliveries) {
          if (known.has(d.id)) continue;
          known.add(d.id);
          const rows = await sql`INSERT INTO notify_deliveries (id, target, type, subject, event_ts, body, created_at, expires_at, status, next_at)
            VALUES (${d.id}, ${d.target}, ${d.type}, ${d.subject}, ${d.event_ts}, ${d.body}, ${new Date(d.created_at)}, ${new Date(d.expires_at)}, 'pending', ${new Date(d.created_at)})
            ON CONFLICT (id) DO NOTHING RETURNING id`;
          added += rows.length;
        }
        return added;
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
        let created = 0;
        for (const d of deliveries) {
          const rows = await sql`INSERT INTO notify_deliveries (id, target, type, subject, event_ts, body, created_at, expires_at, status, attempt_count, attempts, next_at, delivered_at)
            VALUES (${d.id}, ${d.target}, ${d.type}, ${d.subject}, ${d.event_ts}, ${d.body}, ${new Date(d.created_at)}, ${new Date(d.expires_at)}, ${d.status},
              ${d.attempt_count}, ${sql.json(d.attempts as never)}::jsonb, ${d.next_at === null ? null : new Date(d.next_at)}, ${d.delivered_at === null ? null : new Date(d.delivered_at)})
            ON CONFLICT (id) DO NOTHING RETURNING id`;
          created += rows.length;
        }
        return { created, present: deliveries.length - created };
      }),
  };
}
