// The shapes of the webhook outbox (docs/notify.md): one delivery per
// (event, target), known by its `id`, which is also its `webhook-id`.

/** The event kinds a notify target can ask for: the watched ones (events/stored-events.ts). `test` is only sent by `estate notify test`. */
export { WATCHED_KINDS, type WatchedKind } from '../events/stored-events.ts';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One attempt to deliver: when, what the receiver answered (or why there was no answer), how long it took. */
export interface DeliveryAttempt {
  at: string;
  /** The receiver's HTTP status; null when it did not answer. */
  http_status: number | null;
  /** Why the attempt failed (`HTTP 500`, `connect ECONNREFUSED …`, `timed out`); null when it was delivered. Never a secret or the target's URL. */
  error: string | null;
  duration_ms: number;
}

/** A delivery as it is enqueued. */
export interface NewDelivery {
  /** `msg_` + 32 hex digits: the `webhook-id`, the same for every attempt (deliveryId). */
  id: string;
  target: string;
  /** The event's kind (the payload's `type`). */
  type: string;
  subject: string;
  /** The event's `ts`. */
  event_ts: string;
  /** The request body, exactly as sent (and signed) at every attempt. */
  body: string;
  created_at: string;
  /** No attempt starts after this: the delivery is then `failed`. */
  expires_at: string;
}

export interface Delivery extends NewDelivery {
  status: DeliveryStatus;
  /** Attempts made, all of them (the list keeps the newest MAX_KEPT_ATTEMPTS). */
  attempt_count: number;
  attempts: DeliveryAttempt[];
  /** When the next attempt is due (pending only). */
  next_at: string | null;
  delivered_at: string | null;
  /** Who is attempting it now, and until when (a lease: one replica at a time). */
  lease_owner: string | null;
  lease_until: string | null;
}

/** What an attempt leads to: delivered, tried again at `next_at`, or given up. */
export type AttemptResult = { status: 'delivered' } | { status: 'pending'; next_at: string } | { status: 'failed' };

/** Attempts kept per delivery (the count has them all). */
export const MAX_KEPT_ATTEMPTS = 20;

/**
 * The durable outbox of webhook deliveries (Store.outbox). Every method is
 * async and durable when it resolves, as the rest of the Store.
 */
export interface Outbox {
  /**
   * When `target`'s notifications start: the first call for a target stores
   * `at`, every later call (from any process or replica) answers the stored
   * time. Events before it are never sent to the target (docs/notify.md).
   */
  targetSince(target: string, at: Date): Promise<Date>;
  /** Every target's stored start, by name (estate store copy carries them with the deliveries). */
  targets(): Promise<{ target: string; since: string }[]>;
  /** Stores each delivery once by `id` (pending, due at once): answers how many were new. Concurrent enqueuers anywhere store one. */
  enqueue(deliveries: readonly NewDelivery[]): Promise<number>;
  /**
   * Leases up to `limit` pending deliveries to `targets` due at `now`
   * (next_at reached, no lease live) to `owner` for `leaseMs`, oldest due
   * first: a delivery is leased to one claimant at a time, anywhere. A
   * replica claims only the targets its config names. A lease is kept by the
   * store's clock, the one its claimants share: PostgreSQL's own (replicas'
   * clocks may disagree), the data dir's `now` (its processes share a host).
   */
  claim(owner: string, targets: readonly string[], limit: number, now: Date, leaseMs: number): Promise<Delivery[]>;
  /** Records an attempt by the lease's `owner` and what it leads to, ending the lease; false (nothing recorded) when `owner` no longer holds it. */
  finish(id: string, owner: string, attempt: DeliveryAttempt, result: AttemptResult): Promise<boolean>;
  /** The newest `limit` deliveries (by creation), newest first, optionally of one target or status. */
  recent(limit: number, where?: { target?: string; status?: DeliveryStatus }): Promise<Delivery[]>;
  /** Removes delivered and failed deliveries created before `before`, and pending ones that expired before it (of a target no config names any more); answers how many. */
  prune(before: Date): Promise<number>;
  /** Every delivery, oldest first, a page at a time (estate store copy). */
  pages(pageSize: number): AsyncIterable<Delivery[]>;
  /** Stores deliveries made elsewhere (a copy, a test event) as they are, each once by id: how many were new, how many were there already. */
  restore(deliveries: readonly Delivery[]): Promise<{ created: number; present: number }>;
}
