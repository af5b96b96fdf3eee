import path from 'node:path';
import { EstateError } from '../../errors.ts';
import { writeFileAtomic } from '../atomic-write.ts';
import { withFileLock } from '../file-lock.ts';
import { isNotFound } from '../fs-errors.ts';
import { ensureFolder, syncDirectory } from '../jsonl/append-record.ts';
import { readDataFile } from '../open-data-file.ts';
import { type Delivery, type DeliveryAttempt, MAX_KEPT_ATTEMPTS, type Outbox } from './outbox-types.ts';

// The data dir's outbox: one state file, `notify/outbox.json`
// (docs/data-dir.md), `{"version": 1, "targets": {NAME: {"since"}},
// "deliveries": [...]}` in creation order. Every change is made under the
// file's lock (`notify/outbox.json.lock`, file-lock.ts: processes sharing
// the data dir take turns) and written atomically and durably
// (writeFileAtomic, then the folder synced), so a reader or a crash sees the
// state before or after a change, never part of one. A file that is not
// valid JSON, or whose JSON is not an outbox (outboxProblem: a delivery that
// is not one, a field of the wrong type), is never overwritten: the outbox is
// then unavailable, saying so.

export const OUTBOX_FILE = path.join('notify', 'outbox.json');

/**
 * Finished deliveries (delivered or failed) kept whole beyond this many are dropped, oldest first, at the next
 * change; their ids stay (`sent`, with their times) until prune, so an event is never enqueued again.
 */
export const MAX_FINISHED = 2000;

interface OutboxState {
  version: 1;
  targets: Record<string, { since: string }>;
  deliveries: Delivery[];
  /** The ids of finished deliveries dropped by trimFinished, with their created_at: still known to enqueue, until prune. */
  sent?: Record<string, string>;
}

export function dataDirOutbox(dataDir: string): Outbox {
  const file = path.join(dataDir, OUTBOX_FILE);
  const lockFile = `${file}.lock`;

  const read = async (): Promise<OutboxState> => {
    let text: string;
    try {
      text = await readDataFile(file);
    } catch (err) {
      if (isNotFound(err)) return { version: 1, targets: {}, deliveries: [] };
      throw err;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new EstateError('unavailable', `the notify outbox (${OUTBOX_FILE}) is not valid JSON; it is left as it is: move it aside to start a new one`);
    }
    const problem = outboxProblem(parsed);
    if (problem !== undefined) {
      throw new EstateError('unavailable', `the notify outbox (${OUTBOX_FILE}) is not an outbox (${problem}); it is left as it is: move it aside to start a new one`);
    }
    const state = parsed as OutboxState;
    return { version: 1, targets: state.targets, deliveries: state.deliveries, ...(state.sent ? { sent: state.sent } : {}) };
  };

  /** Runs `change` on the state under the lock and writes the state back when it answers `changed`. */
  const update = <T>(change: (state: OutboxState) => { changed: boolean; answer: T }): Promise<T> =>
    ensureFolder(file).then(() =>
      withFileLock(lockFile, async (lock) => {
        const state = await read();
        const { changed, answer } = change(state);
        if (!changed) return answer;
        trimFinished(state);
        await writeFileAtomic(file, `${JSON.stringify(state)}\n`, 0o600, () => {
          lock.checkSync();
          return true;
        });
        await syncDirectory(path.dirname(file));
        return answer;
      }),
    );

  return {
    targetSince: async (target, at) => {
      const known = (await read()).targets[target];
      if (known) return new Date(known.since);
      return update((state) => {
        const stored = state.targets[target];
        if (stored) return { changed: false, answer: new Date(stored.since) };
        state.targets[target] = { since: at.toISOString() };
        return { changed: true, answer: at };
      });
    },
    targets: async () => Object.entries((await read()).targets).map(([target, { since }]) => ({ target, since })),
    enqueue: async (deliveries) => {
      if (deliveries.length === 0) return 0;
      // Most passes find every delivery stored already: a read, no lock.
      const before = new Set((await read()).deliveries.map((d) => d.id));
      if (deliveries.every((d) => before.has(d.id))) return 0;
      return update((state) => {
        const ids = new Set([...state.deliveries.map((d) => d.id), ...Object.keys(state.sent ?? {})]);
        let added = 0;
        for (const d of deliveries) {
          if (ids.has(d.id)) continue;
          ids.add(d.id);
          state.deliveries.push({ ...d, status: 'pending', attempt_count: 0, attempts: [], next_at: d.created_at, delivered_at: null, lease_owner: null, lease_until: null });
          added++;
        }
        return { changed: added > 0, answer: added };
      });
    },
    claim: async (owner, targets, limit, now, leaseMs) => {
      const due = (d: Delivery) => d.status === 'pending' && targets.includes(d.target) && d.next_at !== null && Date.parse(d.next_at) <= now.getTime() && (d.lease_until === null || Date.parse(d.lease_until) <= now.getTime());
      if (limit <= 0 || !(await read()).deliveries.some(due)) return [];
      return update((state) => {
        const claimed = state.deliveries
          .filter(due)
          .sort((a, b) => Date.parse(a.next_at as string) - Date.parse(b.next_at as string))
          .slice(0, limit);
        const until = new Date(now.getTime() + leaseMs).toISOString();
        for (const d of claimed) {
          d.lease_owner = owner;
          d.lease_until = until;
        }
        return { changed: claimed.length > 0, answer: claimed.map((d) => structuredClone(d)) };
      });
    },
    finish: (id, owner, attempt, result) =>
      update((state) => {
        const d = state.deliveries.find((x) => x.id === id);
        if (!d || d.lease_owner !== owner || d.status !== 'pending') return { changed: false, answer: false };
        d.attempt_count++;
        d.attempts = [...d.attempts, attempt].slice(-MAX_KEPT_ATTEMPTS);
        d.status = result.status;
        d.next_at = result.status === 'pending' ? result.next_at : null;
        d.delivered_at = result.status === 'delivered' ? attempt.at : null;
        d.lease_owner = null;
        d.lease_until = null;
        return { changed: true, answer: true };
      }),
    recent: async (limit, where = {}) => {
      const out: Delivery[] = [];
      const { deliveries } = await read();
      for (let i = deliveries.length - 1; i >= 0 && out.length < limit; i--) {
        const d = deliveries[i] as Delivery;
        if ((where.target === undefined || d.target === where.target) && (where.status === undefined || d.status === where.status)) out.push(d);
      }
      return out;
    },
    prune: (before) =>
      update((state) => {
        const kept = state.deliveries.filter((d) => (d.status === 'pending' ? Date.parse(d.expires_at) : Date.parse(d.created_at)) >= before.getTime());
        const removed = state.deliveries.length - kept.length;
        state.deliveries = kept;
        const sent = Object.entries(state.sent ?? {});
        const sentKept = sent.filter(([, created]) => Date.parse(created) >= before.getTime());
        if (state.sent) state.sent = Object.fromEntries(sentKept);
        return { changed: removed > 0 || sentKept.length < sent.length, answer: removed };
      }),
    pages: async function* (pageSize) {
      const { deliveries } = await read();
      for (let i = 0; i < deliveries.length; i += pageSize) yield deliveries.slice(i, i + pageSize);
    },
    restore: (deliveries) =>
      update((state) => {
        const ids = new Set([...state.deliveries.map((d) => d.id), ...Object.keys(state.sent ?? {})]);
        let created = 0;
        for (const d of deliveries) {
          if (ids.has(d.id)) continue;
          ids.add(d.id);
          state.deliveries.push({ ...d, lease_owner: null, lease_until: null });
          created++;
        }
        return { changed: created > 0, answer: { created, present: deliveries.length - created } };
      }),
  };
}

/** Drops the oldest finished deliveries past MAX_FINISHED, keeping their ids in `sent`; pending ones always stay. */
function trimFinished(state: OutboxState): void {
  let drop = state.deliveries.filter((d) => d.status !== 'pending').length - MAX_FINISHED;
  if (drop <= 0) return;
  const sent = (state.sent ??= {});
  state.deliveries = state.deliveries.filter((d) => {
    if (d.status === 'pending' || drop <= 0) return true;
    drop--;
    sent[d.id] = d.created_at;
    return false;
  });
}

// The shape of the state file, checked whole at every read: a call on a
// damaged file fails saying what is wrong, never with a TypeError, an answer
// made of the damage, or a write that carries it on.

type Check = (v: unknown) => boolean;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isString: Check = (v) => typeof v === 'string';
const isTime: Check = (v) => typeof v === 'string' && Number.isFinite(Date.parse(v));
const orNull = (check: Check): Check => (v) => v === null || check(v);
const isCount: Check = (v) => Number.isSafeInteger(v) && (v as number) >= 0;

const ATTEMPT_FIELDS: Record<keyof DeliveryAttempt, Check> = {
  at: isString,
  http_status: orNull(Number.isSafeInteger),
  error: orNull(isString),
  duration_ms: (v) => typeof v === 'number' && Number.isFinite(v),
};

const DELIVERY_FIELDS: Record<keyof Delivery, Check> = {
  id: isString,
  target: isString,
  type: isString,
  subject: isString,
  event_ts: isString,
  body: isString,
  created_at: isTime,
  expires_at: isTime,
  status: (v) => v === 'pending' || v === 'delivered' || v === 'failed',
  attempt_count: isCount,
  attempts: (v) => Array.isArray(v) && v.every((a) => isObject(a) && hasFields(a, ATTEMPT_FIELDS)),
  next_at: orNull(isTime),
  delivered_at: orNull(isTime),
  lease_owner: orNull(isString),
  lease_until: orNull(isTime),
};

function hasFields(value: Record<string, unknown>, fields: Record<string, Check>): boolean {
  return Object.entries(fields).every(([name, check]) => check(value[name]));
}

/** What makes `parsed` not an OutboxState (the first thing found, in a few words), or undefined when it is one. */
function outboxProblem(parsed: unknown): string | undefined {
  if (!isObject(parsed)) return 'not a JSON object';
  if (parsed.version !== 1) return 'its version is not 1';
  if (!isObject(parsed.targets)) return 'no "targets" object';
  for (const [name, target] of Object.entries(parsed.targets)) {
    if (!isObject(target) || !isTime(target.since)) return `targets[${JSON.stringify(name)}] is not a target's start`;
  }
  if (!Array.isArray(parsed.deliveries)) return 'no "deliveries" list';
  for (const [i, d] of parsed.deliveries.entries()) {
    if (!isObject(d)) return `deliveries[${i}] is not a delivery`;
    const wrong = Object.entries<Check>(DELIVERY_FIELDS).find(([name, check]) => !check(d[name]))?.[0];
    if (wrong !== undefined) return `deliveries[${i}].${wrong} is missing or not of its type`;
  }
  if (parsed.sent !== undefined && (!isObject(parsed.sent) || !Object.values(parsed.sent).every(isTime))) return '"sent" is not a map of ids to times';
  return undefined;
}
