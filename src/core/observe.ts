import { channel, type Channel } from 'node:diagnostics_channel';
import path from 'node:path';
import { DATA_FILES } from './data-files.ts';

// What core tells whoever measures it (GET /metrics: src/server/metrics/),
// without knowing who: the Store's writes, the data dir's durable appends
// and lock waits, the requests to external sources. Each is published on a
// node:diagnostics_channel channel, and only when someone subscribes
// (`hasSubscribers`): with nobody listening an observation costs a property
// read. Every label is from a closed set (never a path, a URL, an id).
// `performance` is the global one, read only when someone listens: a
// command that reads no lock (`estate trends`) loads no node:perf_hooks.

/** A write through the Store: its kind, how many records it carried, how long it took. */
export interface StoreWrite {
  kind: StoreWriteKind;
  records: number;
  seconds: number;
  ok: boolean;
}
export type StoreWriteKind = 'completions' | 'starts' | 'events' | 'entries' | 'ingest' | 'sample' | 'probes';

/** One durable append to a data dir log (one write and one fsync): the log's file name and how many records the batch held. */
export interface LogAppend {
  log: string;
  records: number;
  seconds: number;
}

/** Time spent waiting for a data dir file lock before holding it (file-lock.ts), by the lock's name. */
export interface LockWait {
  lock: string;
  seconds: number;
}

/** One request to a source estate does not own: which, how long, and how it ended. */
export interface ExternalCall {
  source: ExternalSource;
  seconds: number;
  outcome: 'ok' | 'error' | 'timeout';
}
export type ExternalSource = 'forge' | 'providers' | 'stats';

/** One recorded attempt of a webhook delivery: its target (a name of the config's `notify`), what it led to, how long it took. */
export interface NotifyAttempt {
  target: string;
  outcome: 'delivered' | 'retry' | 'failed';
  seconds: number;
}

/** A watched event stored for the first time (by this process), by its kind. */
export interface EventRecorded {
  kind: string;
}

const channels = {
  storeWrite: channel('estate:store-write') as Channel<StoreWrite>,
  logAppend: channel('estate:log-append') as Channel<LogAppend>,
  lockWait: channel('estate:lock-wait') as Channel<LockWait>,
  external: channel('estate:external-call') as Channel<ExternalCall>,
  notifyAttempt: channel('estate:notify-attempt') as Channel<NotifyAttempt>,
  eventRecorded: channel('estate:event-recorded') as Channel<EventRecorded>,
};

/** What a measurer receives; subscribe it with observeCore. */
export interface CoreObserver {
  storeWrite(o: StoreWrite): void;
  logAppend(o: LogAppend): void;
  lockWait(o: LockWait): void;
  external(o: ExternalCall): void;
  notifyAttempt(o: NotifyAttempt): void;
  eventRecorded(o: EventRecorded): void;
}

/**
 * Subscribes `observer` to every observation of this process; the answer
 * unsubscribes it.
 *
 * @example
 *   const stop = observeCore({ storeWrite: (w) => histogram.observe({ kind: w.kind }, w.seconds), ... });
 */
export function observeCore(observer: CoreObserver): () => void {
  const subscriptions = [
    [channels.storeWrite, (m: unknown) => observer.storeWrite(m as StoreWrite)],
    [channels.logAppend, (m: unknown) => observer.logAppend(m as LogAppend)],
    [channels.lockWait, (m: unknown) => observer.lockWait(m as LockWait)],
    [channels.external, (m: unknown) => observer.external(m as ExternalCall)],
    [channels.notifyAttempt, (m: unknown) => observer.notifyAttempt(m as NotifyAttempt)],
    [channels.eventRecorded, (m: unknown) => observer.eventRecorded(m as EventRecorded)],
  ] as const;
  for (const [c, f] of subscriptions) c.subscribe(f);
  return () => {
    for (const [c, f] of subscriptions) c.unsubscribe(f);
  };
}

/** `write()`, timed and published as a StoreWrite of `kind` carrying `records` records (only when someone listens). */
export async function timedWrite<T>(kind: StoreWriteKind, records: number, write: () => Promise<T>): Promise<T> {
  if (!channels.storeWrite.hasSubscribers) return write();
  const started = performance.now();
  let ok = false;
  try {
    const result = await write();
    ok = true;
    return result;
  } finally {
    channels.storeWrite.publish({ kind, records, seconds: (performance.now() - started) / 1000, ok });
  }
}

/** A start time for an observation, or undefined when nobody listens to `what` (then the others are no-ops). */
export function observing(what: 'logAppend' | 'lockWait' | 'external'): number | undefined {
  return channels[what].hasSubscribers ? performance.now() : undefined;
}

/** Publishes a durable append of `records` records to the log `file`, begun at `started` (observing('logAppend')). */
export function observeLogAppend(started: number | undefined, file: string, records: number): void {
  if (started !== undefined) channels.logAppend.publish({ log: knownName(file), records, seconds: (performance.now() - started) / 1000 });
}

/** Publishes the wait for the lock `lockFile`, begun at `started` (observing('lockWait')). */
export function observeLockWait(started: number | undefined, lockFile: string): void {
  if (started !== undefined) channels.lockWait.publish({ lock: knownName(lockFile.replace(/\.lock$/, '')), seconds: (performance.now() - started) / 1000 });
}

/** Publishes a request to `source`, begun at `started` (observing('external')). */
export function observeExternal(started: number | undefined, source: ExternalSource, outcome: ExternalCall['outcome']): void {
  if (started !== undefined) channels.external.publish({ source, seconds: (performance.now() - started) / 1000, outcome });
}

/** The file names of the data dir's layout (and the state files estate locks): a label takes one of these, else `other`. */
const KNOWN = new Set([...Object.values(DATA_FILES).map((f) => path.basename(f)), 'heartbeat.json', 'index.json', 'retention']);

function knownName(file: string): string {
  const name = path.basename(file);
  return KNOWN.has(name) ? name : 'other';
}

/** Publishes a recorded attempt of a delivery to `target` (only when someone listens). */
export function observeNotifyAttempt(target: string, outcome: NotifyAttempt['outcome'], seconds: number): void {
  if (channels.notifyAttempt.hasSubscribers) channels.notifyAttempt.publish({ target, outcome, seconds });
}

/** Publishes a watched event of `kind` stored for the first time (only when someone listens). */
export function observeEventRecorded(kind: string): void {
  if (channels.eventRecorded.hasSubscribers) channels.eventRecorded.publish({ kind });
}
