import { mapBounded } from '../map-bounded.ts';
import { KeptWindows, plainWindows } from '../series/series-windows.ts';
import { observeEventRecorded } from '../observe.ts';
import type { StoredEvents } from '../store/store.ts';
import { elapsedText } from '../elapsed-text.ts';
import { type ConditionFamily, familyOf } from './condition-changes.ts';
import { deriveEvents, type EstateEvent, type EventSources, type EventWatch } from './estate-events.ts';
import { eventKey, eventRecord, isWatched } from './stored-events.ts';

// The event recorder of `estate serve` (DESIGN.md 3, 7c): the watched events
// stored when they happen. Every pass derives the events as /events does
// (deriveEvents: the same inputs give the same events with the same ts, on
// every replica and after a restart) and stores each watched one not stored
// yet (store.events: once per kind, subject and ts, whichever replica writes
// it first; the first message is the one kept). Once stored, an event stays
// in /events and reaches the webhooks whatever happens to its inputs.

/** The default time between passes (config `events.watch_every`). */
export const WATCH_EVERY_MS = 10_000;
/** A pass that took long is followed by a pause of at least this many times its length: the recorder never takes more than a sixth of the process. */
const PAUSE_FACTOR = 5;
/** Events stored at once. */
const CONCURRENT_WRITES = 32;
/** A subject's newest stored events read for the last change of each of its conditions. */
const CHANGES_READ = 50;
/** How often the stored events older than the retention are removed. */
const PRUNE_EVERY_MS = 3_600_000;

export interface RecorderContext extends EventSources {
  store: EventSources['store'] & { events: Pick<StoredEvents, 'write' | 'prune' | 'newest'> };
  staleAfterS: number;
  /** How long stored events are kept (config events.retention): older ones are removed hourly, and never stored again. */
  keepMs: number;
  watch: EventWatch;
  /** The time between passes (WATCH_EVERY_MS). */
  everyMs?: number;
  /**
   * Keep the nodes' windows between passes and read only what was written
   * since (series/series-windows.ts: KeptWindows): for a store whose logs are
   * appended in write order, the data dir's, not PostgreSQL's.
   */
  keepWindows?: boolean;
  now: () => Date;
}

export interface RecorderReport {
  /** Events stored by this pass for the first time anywhere (their count). */
  recorded: (count: number) => void;
  /** A pass that failed (the store unavailable, an input unreadable); the next pass tries again. Said once until the failure changes. */
  failed: (what: string, err: unknown) => void;
}

export interface EventRecorder {
  /** Runs a pass now (after the one under way); resolves with how many events it stored. */
  pass: () => Promise<number>;
  /** Ends the passes; waits for the one under way. */
  stop: () => Promise<void>;
}

/** Starts the recorder: a first pass at once, then one every `everyMs`. */
export function startEventRecorder(ctx: RecorderContext, report: RecorderReport): EventRecorder {
  const everyMs = ctx.everyMs ?? WATCH_EVERY_MS;
  const series = oneReadAtATime(ctx.store.series);
  const kept = ctx.keepWindows ? new KeptWindows(series) : undefined;
  const windows = kept ?? plainWindows(series);
  /** Each condition's last stored change (family and subject), read from the store at its first use, then kept as this recorder stores. */
  const changes = new Map<string, { kind: string; ts: string } | null>();
  const lastChange = async (family: ConditionFamily, subject: string) => {
    const key = JSON.stringify([family, subject]);
    if (changes.has(key)) return changes.get(key) ?? undefined;
    const { records } = await ctx.store.events.newest(CHANGES_READ, { facet: 'subject', value: subject });
    const record = records.find((r) => typeof r.kind === 'string' && familyOf(r.kind) === family);
    const change = record ? { kind: String(record.kind), ts: String(record.ts) } : null;
    changes.set(key, change);
    return change ?? undefined;
  };
  /** The keys of the events known to be stored, of the last pass's events only (memory is bounded by what the inputs derive). */
  let stored = new Set<string>();
  let said: string | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> = Promise.resolve(0);

  let prunedAt = -Infinity;
  const once = async (): Promise<number> => {
    const now = ctx.now().getTime();
    if (now - prunedAt >= PRUNE_EVERY_MS) {
      prunedAt = now;
      // A retention round that fails (the log's lock held long) waits for the next hour; the events are stored meanwhile.
      await ctx.store.events.prune(new Date(now - ctx.keepMs)).catch((err: unknown) => report.failed('events_prune_failed', err));
    }
    kept?.beginPass();
    const list = await deriveEvents({ dataDir: ctx.dataDir, store: { ...ctx.store, series }, windows }, Number.MAX_SAFE_INTEGER, ctx.staleAfterS, new Date(now), ctx.watch);
    // An input that could not be read leaves its events out of this pass (they are stored by a later one), and is said.
    if (list.errors.length) fail('events_watch_incomplete', new Error(list.errors.join('; ')));
    // Oldest first: the log's write order follows the events' time.
    const watched = list.items.filter((e) => isWatched(e) && Date.parse(e.ts) >= now - ctx.keepMs).reverse();
    const known = new Set<string>();
    let created = 0;
    const write = async (event: EstateEvent) => {
      const result = await ctx.store.events.write(eventRecord(event), ctx.now);
      if (result.outcome === 'created') {
        created++;
        observeEventRecorded(event.kind);
      }
      return result.record;
    };
    // The changes of conditions, one condition at a time in order, against its last stored change (condition-changes.ts):
    // a derived change that repeats it, or is older, is not stored.
    const groups = new Map<string, EstateEvent[]>();
    const others: EstateEvent[] = [];
    for (const e of watched) {
      const family = familyOf(e.kind);
      if (!family) others.push(e);
      else {
        const key = JSON.stringify([family, e.subject]);
        const group = groups.get(key);
        if (group) group.push(e);
        else groups.set(key, [e]);
      }
    }
    await mapBounded([...groups.values()], CONCURRENT_WRITES, async (group) => {
      const first = group[0] as EstateEvent;
      const family = familyOf(first.kind) as ConditionFamily;
      let last = await lastChange(family, first.subject);
      for (const event of group) {
        const key = eventKey(event);
        if (stored.has(key)) {
          known.add(key);
          continue;
        }
        if (last && (event.ts < last.ts || event.kind === last.kind)) continue;
        const record = await write(event);
        last = { kind: String(record.kind), ts: String(record.ts) };
        changes.set(JSON.stringify([family, first.subject]), last);
        known.add(key);
      }
    });
    await mapBounded(others, CONCURRENT_WRITES, async (event) => {
      const key = eventKey(event);
      // A replay (stored before, by this server or another) and a conflict (stored with an older message) are both stored already.
      if (!stored.has(key)) await write(event);
      known.add(key);
    });
    // A node stale in the store and seen again with no node_recovered derived (a node known by its heartbeat alone, a
    // spool replayed with no gap left in its points): its recovery is stored at the heartbeat that ended the silence.
    const staleMs = ctx.staleAfterS * 1000;
    for (const beat of list.items) {
      if (beat.kind !== 'heartbeat') continue;
      const seen = Date.parse(beat.ts);
      if (now - seen > staleMs) continue;
      // Read once per node after a start (a node may have come back while no server ran), then kept.
      const open = await lastChange('node', beat.subject);
      if (open?.kind !== 'node_stale' || seen <= Date.parse(open.ts) - staleMs) continue;
      // Another replica may have stored it meanwhile.
      changes.delete(JSON.stringify(['node', beat.subject]));
      const latest = await lastChange('node', beat.subject);
      if (latest?.kind !== 'node_stale') continue;
      const silence = seen - (Date.parse(latest.ts) - staleMs);
      const record = await write({ ts: beat.ts, kind: 'node_recovered', source: 'heartbeat', subject: beat.subject, message: `${beat.subject} is sending again after ${elapsedText(silence)} of silence` });
      changes.set(JSON.stringify(['node', beat.subject]), { kind: String(record.kind), ts: String(record.ts) });
    }
    stored = known;
    if (created) report.recorded(created);
    if (!list.errors.length) said = undefined;
    return created;
  };

  const fail = (what: string, err: unknown) => {
    const text = `${what}: ${String((err as Error)?.message ?? err)}`;
    if (said !== text) report.failed(what, err);
    said = text;
  };

  const pass = (): Promise<number> => {
    running = running.then(async () => {
      if (stopped) return 0;
      try {
        return await once();
      } catch (err) {
        fail('events_watch_failed', err);
        return 0;
      }
    });
    return running;
  };

  const loop = () => {
    const started = performance.now();
    void pass().then(() => {
      if (stopped) return;
      timer = setTimeout(loop, Math.max(everyMs, PAUSE_FACTOR * (performance.now() - started)));
    });
  };
  loop();

  return {
    pass,
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

/**
 * The series as a pass reads them: one read at a time, each after the
 * event loop has had a turn, so a pass over a big hub (200 nodes: 400 reads
 * of 200 records) delays a request by one read, not by the whole pass.
 */
function oneReadAtATime(series: EventSources['store']['series']): EventSources['store']['series'] {
  let last: Promise<unknown> = Promise.resolve();
  const turn = <T>(read: () => Promise<T>): Promise<T> => {
    const next = last.then(() => new Promise((resolve) => setImmediate(resolve))).then(read);
    last = next.catch(() => {});
    return next;
  };
  return {
    heartbeat: () => series.heartbeat(),
    nodes: () => series.nodes(),
    newest: (name, limit, where) => turn(() => series.newest(name, limit, where)),
  };
}
