import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { NotifyTargetConfig } from '../../config.ts';
import { parseDuration } from '../duration.ts';
import { observeNotifyAttempt } from '../observe.ts';
import { storedEvent, WATCHED_KINDS } from '../events/stored-events.ts';
import type { JsonRecord, Store } from '../store/store.ts';
import { deliveryId } from './delivery-id.ts';
import type { AttemptResult, Delivery, DeliveryAttempt, NewDelivery } from './outbox-types.ts';
import { retryDelayMs } from './retry-delay.ts';
import { sendWebhook, STOPPED } from './send-webhook.ts';
import { webhookBody, type WebhookEvent } from './webhook-payload.ts';
import { readWebhookSecret } from './webhook-secret.ts';

// The webhook dispatcher of `estate serve` (docs/notify.md). Each pass:
// - the watched events stored since the last pass (store.events, written
//   when they happen by the event recorder of every replica:
//   events/event-recorder.ts) are read, and each one of a target's kinds,
//   dated at or after the target's start (Outbox.targetSince: when a
//   dispatcher first saw the target) and within `notify_catch_up` of now, is
//   enqueued under its stable id: once, however many replicas or restarts
//   see it (a dispatcher starting reads the newest SCAN_PAGE);
// - due deliveries are claimed (leased to this dispatcher) and attempted in
//   the background, at most CONCURRENCY at once (a slot that frees claims
//   again at once while more are due, so a backlog drains at the receiver's pace), each bounded by its
//   target's `timeout_ms`: a slow or dead receiver holds a slot, never a request.
// A failed attempt is tried again after retryDelayMs, until the delivery's
// `expires_at` (created + the target's `retry_for`); then it is `failed`.

export const PASS_MS = 1000;
export const CONCURRENCY = 8;
/** Finished deliveries are kept this long (longer than the longest catch-up window, so an event is never enqueued twice). */
export const KEEP_FINISHED_MS = 8 * 86_400_000;
const PRUNE_MS = 3_600_000;
/** Stored events read at most per pass (the newest of them when more were stored since the last). */
const SCAN_PAGE = 10_000;
/** Stored events read at most at a dispatcher's start, looking back notify_catch_up (a page of SCAN_PAGE first, four times more while they are all within it). */
const MAX_START_READ = 640_000;

export interface DispatcherContext {
  store: Pick<Store, 'outbox' | 'events'>;
  targets: readonly NotifyTargetConfig[];
  /** Each target's secret by name (Secrets.notify). */
  secrets: Readonly<Record<string, string | undefined>>;
  catchUpMs: number;
  /** Stored events read at most per pass (default SCAN_PAGE; smaller in tests). */
  scanPage?: number;
  /** When the server started: a target seen for the first time starts here. */
  startedAt: Date;
  now: () => Date;
}

export interface DispatcherReport {
  enqueued: (count: number) => void;
  attempted: (delivery: Delivery, attempt: DeliveryAttempt, result: AttemptResult) => void;
  /** A pass that failed (the store unavailable…); the next pass tries again. Said once until the failure changes. */
  failed: (what: string, err: unknown) => void;
}

export interface Dispatcher {
  stop: () => Promise<void>;
}

/** Starts the dispatcher; `stop()` ends its passes and its attempts (an attempt cut short is tried again later, with the same id). */
export function startNotifyDispatcher(ctx: DispatcherContext, report: DispatcherReport): Dispatcher {
  const owner = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const stopping = new AbortController();
  const inflight = new Set<Promise<void>>();
  const since = new Map<string, number>();
  const byName = new Map(ctx.targets.map((t) => [t.name, t]));
  const names = [...byName.keys()];
  const leaseMs = Math.max(...ctx.targets.map((t) => t.timeout_ms), 1000) + 5000;
  const scanPage = ctx.scanPage ?? SCAN_PAGE;
  /** The id of the newest stored event read; undefined until the first scan. */
  let cursor: string | undefined;
  let lastPrune = 0;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  /** Each step's last failure, said once until it changes or the step succeeds (a pass without a scan clears only its own). */
  const said = new Map<string, string>();
  const fail = (what: string, err: unknown, step = what) => {
    const text = `${what}: ${String((err as Error)?.message ?? err)}`;
    if (said.get(step) !== text) report.failed(what, err);
    said.set(step, text);
  };

  const scan = async (now: Date) => {
    // A cursor whose event is gone (pruned, a store copied afresh) starts again from the newest: what was enqueued before is known by its id.
    let records: JsonRecord[] | undefined = cursor === undefined ? undefined : await ctx.store.events.since(cursor, scanPage);
    if (records?.length === scanPage) report.failed('notify_scan_cut', new Error(`more than ${scanPage} events were stored since the last pass: only the newest ${scanPage} were looked at`));
    records ??= await newestWithin(now.getTime() - ctx.catchUpMs);
    const last = records.at(-1)?.id;
    const watched = records.map(storedEvent).filter((e) => e !== undefined);
    const deliveries: NewDelivery[] = [];
    for (const target of ctx.targets) {
      let start = since.get(target.name);
      if (start === undefined) {
        start = (await ctx.store.outbox.targetSince(target.name, ctx.startedAt)).getTime();
        since.set(target.name, start);
      }
      const floor = Math.max(start, now.getTime() - ctx.catchUpMs);
      const kinds: readonly string[] = target.events ?? WATCHED_KINDS;
      for (const event of watched) {
        if (kinds.includes(event.kind) && Date.parse(event.ts) >= floor) deliveries.push(newDelivery(target, event, now));
      }
    }
    const added = deliveries.length ? await ctx.store.outbox.enqueue(deliveries) : 0;
    if (added) report.enqueued(added);
    if (typeof last === 'string') cursor = last;
  };

  /** The stored events, oldest first, back to the first dated before `floorMs` (the catch-up window; write order follows time), at most MAX_START_READ. */
  const newestWithin = async (floorMs: number): Promise<JsonRecord[]> => {
    for (let n = scanPage; ; n *= 4) {
      const { records } = await ctx.store.events.newest(Math.min(n, MAX_START_READ), undefined);
      const oldest = records.at(-1);
      const before = typeof oldest?.ts === 'string' && Date.parse(oldest.ts) < floorMs;
      if (records.length < n || before || n >= MAX_START_READ) {
        if (!before && records.length >= MAX_START_READ) report.failed('notify_scan_cut', new Error(`more than ${MAX_START_READ} events within notify_catch_up: only the newest were looked at`));
        return [...records].reverse();
      }
    }
  };

  /** One attempt of a claimed delivery (claims are of this config's targets only), recorded with what it leads to. */
  const attempt = async (delivery: Delivery) => {
    const target = byName.get(delivery.target) as NotifyTargetConfig;
    const now = ctx.now();
    const unsent = (error: string): DeliveryAttempt => ({ at: now.toISOString(), http_status: null, error, duration_ms: 0 });
    let outcome: DeliveryAttempt;
    if (now.getTime() > Date.parse(delivery.expires_at)) {
      // Claimed only after its retry_for ran out (every server was down meanwhile): no attempt starts now.
      outcome = unsent('not attempted: its retry_for ran out before it could be tried again');
    } else {
      try {
        const secret = readWebhookSecret(target.secret_env, ctx.secrets[target.name]);
        outcome = await sendWebhook({ url: target.url, id: delivery.id, body: delivery.body, secret, timeoutMs: target.timeout_ms, signal: stopping.signal, now: ctx.now });
      } catch (err) {
        outcome = unsent((err as Error).message);
      }
    }
    const result = nextStep(delivery, outcome, stopping.signal.aborted);
    if (await ctx.store.outbox.finish(delivery.id, owner, outcome, result)) {
      observeNotifyAttempt(delivery.target, result.status === 'pending' ? 'retry' : result.status, outcome.duration_ms / 1000);
      report.attempted(delivery, outcome, result);
    }
    // Its lease ran out while the attempt was under way (a hanging receiver past the lease): another dispatcher owns the delivery now, and this attempt is not recorded.
    else report.failed('notify_lease_lost', new Error(`${delivery.id} to ${delivery.target}: the lease ran out before the attempt ended; not recorded`));
  };

  /** Whether the last claim took as many as it asked for: more may be due, so a slot that frees claims again at once. */
  let moreDue = false;
  let claiming: Promise<void> | undefined;
  let again = false;
  /** Claims what is due into the free slots, one claim at a time (a pass and a freed slot never claim at once). */
  const deliver = (): Promise<void> => {
    if (claiming) {
      // A slot freed during a claim that counted it taken: claim once more after it.
      again = true;
      return claiming;
    }
    claiming = (async () => {
      const free = CONCURRENCY - inflight.size;
      if (free <= 0 || stopping.signal.aborted) return;
      // The time of the claim itself: a lease counts from when it is taken, not from the start of a pass whose scan took a while.
      const claimed = await ctx.store.outbox.claim(owner, names, free, ctx.now(), leaseMs);
      moreDue = claimed.length === free;
      for (const delivery of claimed) {
        const p: Promise<void> = attempt(delivery)
          .catch((err: unknown) => fail('notify_attempt_failed', err))
          .finally(() => {
            inflight.delete(p);
            if (moreDue && !stopping.signal.aborted) void deliver().catch((err: unknown) => fail('notify_pass_failed', err, 'deliver'));
          });
        inflight.add(p);
      }
    })().finally(() => {
      claiming = undefined;
      if (again && moreDue && !stopping.signal.aborted) {
        again = false;
        void deliver().catch((err: unknown) => fail('notify_pass_failed', err, 'deliver'));
      }
      again = false;
    });
    return claiming;
  };

  const pass = async () => {
    const now = ctx.now();
    try {
      await scan(now);
      said.delete('scan');
    } catch (err) {
      fail('notify_pass_failed', err, 'scan');
    }
    try {
      if (now.getTime() - lastPrune >= PRUNE_MS) {
        lastPrune = now.getTime();
        await ctx.store.outbox.prune(new Date(now.getTime() - KEEP_FINISHED_MS));
      }
      await deliver();
      said.delete('deliver');
    } catch (err) {
      fail('notify_pass_failed', err, 'deliver');
    }
  };

  const loop = () => {
    if (stopping.signal.aborted) return;
    running = pass().finally(() => {
      running = undefined;
      if (!stopping.signal.aborted) timer = setTimeout(loop, PASS_MS);
    });
  };
  if (ctx.targets.length) loop();

  return {
    stop: async () => {
      stopping.abort();
      clearTimeout(timer);
      await running;
      await claiming?.catch(() => {});
      await Promise.all(inflight);
    },
  };
}

function newDelivery(target: NotifyTargetConfig, event: WebhookEvent, now: Date): NewDelivery {
  return {
    id: deliveryId(target.name, event),
    target: target.name,
    type: event.kind,
    subject: event.subject,
    event_ts: event.ts,
    body: webhookBody(event),
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + parseDuration(target.retry_for, 'retry_for', 7 * 86_400_000)).toISOString(),
  };
}

/**
 * What an attempt leads to: delivered on a 2xx, else another attempt after
 * the backoff unless that would start past `expires_at` (an attempt cut
 * short by a stop is tried again at once). The backoff counts the earlier
 * attempts that were not cut short by a stop: a restart does not lengthen it.
 */
export function nextStep(delivery: Pick<Delivery, 'attempts' | 'expires_at'>, attempt: DeliveryAttempt, stopped = false, random = Math.random()): AttemptResult {
  if (attempt.error === null) return { status: 'delivered' };
  const at = Date.parse(attempt.at);
  const made = delivery.attempts.filter((a) => a.error !== STOPPED).length;
  const next = stopped ? at : at + retryDelayMs(made + 1, random);
  return next > Date.parse(delivery.expires_at) ? { status: 'failed' } : { status: 'pending', next_at: new Date(next).toISOString() };
}
