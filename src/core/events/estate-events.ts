import { NODE_GAP_WINDOW, nodeGapEvents } from '../alerts/node-gaps.ts';
import { allProviderAlerts } from '../alerts/read-provider-alerts.ts';
import { allPulseAlerts } from '../alerts/read-pulse-alerts.ts';
import { mapBounded } from '../map-bounded.ts';
import { allScheduleEvents } from '../schedules/read-schedules.ts';
import type { ScheduleConfig } from '../schedules/schedule-spec.ts';
import { readStateDocument, type StateDocument } from '../state-files.ts';
import type { KeyedRecords, ProviderProbes, Series } from '../store/store.ts';
import { plainWindows, type SeriesWindows } from '../series/series-windows.ts';
import { withoutRepeats } from './condition-changes.ts';
import { eventKey, storedEvent } from './stored-events.ts';

/** Stored events read at least, for the conditions' state (condition-changes.ts) whatever the limit asked. */
const STORED_READ = 500;

export interface EstateEvent {
  ts: string;
  kind:
    | 'heartbeat'
    | 'node_stale'
    | 'node_recovered'
    | 'score'
    | 'schedule_late'
    | 'schedule_down'
    | 'schedule_recovered'
    | 'schedule_too_fast'
    | 'pulse_degraded'
    | 'pulse_unhealthy'
    | 'pulse_recovered'
    | 'provider_down'
    | 'provider_recovered';
  source: 'heartbeat' | 'scoreboard' | 'schedule' | 'pulse' | 'provider';
  subject: string;
  message: string;
}

/** What else the events come from: the config's schedules, the alerts' hold (`alerts.hold`), this node's name (for pulse entries without one), and the configured providers' names. */
export interface EventWatch {
  schedules: readonly ScheduleConfig[];
  holdMs: number;
  thisNode: string;
  providers?: readonly string[];
}

export interface EventList {
  items: EstateEvent[];
  count: number;
  limit: number;
  stale_after_s: number;
  /** Entries of the state files that had no usable name or time. */
  skipped_entries: number;
  /** State files that exist but could not be read as events. */
  errors: string[];
}

type Entry = Record<string, unknown>;

/** Nodes whose trend points are read at once for their stale spells. */
const CONCURRENT_NODES = 16;

/** What the events are read from: the data dir's scoreboard and the store's series, check-ins, run starts, probes and (estateEvents) stored events. */
export interface EventSources {
  dataDir: string;
  /** How the nodes' windows of the series are read (default: whole, each time: plainWindows). */
  windows?: SeriesWindows;
  store: { series: Pick<Series, 'heartbeat' | 'nodes' | 'newest'>; completions: KeyedRecords; starts: KeyedRecords; probes: Pick<ProviderProbes, 'newest'> };
}

/**
 * What /events answers (DESIGN.md section 3): the derived events
 * (deriveEvents) and the stored ones (the watched events as they were first
 * noticed: events/stored-events.ts) merged newest first, an event that is
 * both once, as stored, and a derived one that repeats the kind before it
 * in its condition left out (condition-changes.ts). The stored ones are the
 * newest recorded, at least `limit`.
 */
export async function estateEvents(
  ctx: EventSources & { store: { events: Pick<KeyedRecords, 'newest'> } },
  limit: number,
  staleAfterS: number,
  now: Date,
  watch?: EventWatch,
): Promise<EventList> {
  const [derived, stored] = await Promise.all([
    deriveEvents(ctx, limit, staleAfterS, now, watch),
    ctx.store.events.newest(Math.max(limit, STORED_READ)).catch((err: unknown) => err as Error),
  ]);
  if (stored instanceof Error) {
    derived.errors.push(`stored events: could not be read (${codeOf(stored)})`);
    return derived;
  }
  const kept = new Map<string, EstateEvent>();
  for (const record of stored.records) {
    const event = storedEvent(record);
    if (event && !kept.has(eventKey(event))) kept.set(eventKey(event), event);
  }
  // A derived event that repeats its condition's last change (a window that lost the condition's start) is left out (condition-changes.ts).
  const told = withoutRepeats([...[...kept.values()].map((event) => ({ event, stored: true })), ...derived.items.filter((e) => !kept.has(eventKey(e))).map((event) => ({ event, stored: false }))]);
  const events = told.map((t) => t.event);
  sortNewestFirst(events);
  const items = events.slice(0, limit);
  return { ...derived, items, count: items.length };
}

/**
 * The events derived from `state/heartbeat.json` and `state/scoreboard.json`,
 * newest first. Accepted shapes (docs/data-dir.md):
 * heartbeat `{"nodes": [{name, last_seen, status}]}`, `{"nodes": {NAME: {...}}}` or a bare array;
 * scoreboard `{"entries": [{name, score, ts}]}`, `{"entries": {NAME: {...}}}` or a bare array.
 * A node not seen for `staleAfterS` seconds (neither in the heartbeat nor
 * in its trend points) yields a `node_stale` event, and each past gap
 * longer than that between two of its newest NODE_GAP_WINDOW trend points
 * a `node_stale` and a `node_recovered` (alerts/node-gaps.ts).
 * The heartbeat is the store's (`series.heartbeat()`), the scoreboard the data dir's.
 * Each of `watch.schedules` adds its state changes (`schedule_late`,
 * `schedule_down`, `schedule_recovered`, `schedule_too_fast`: schedule-status.ts)
 * from the store's completions and run starts, and each node's pulse its alerts (`pulse_degraded`,
 * `pulse_unhealthy`, `pulse_recovered` once held for `watch.holdMs`:
 * alerts/pulse-alerts.ts) from its newest entries, and each of
 * `watch.providers` its alerts (`provider_down`, `provider_recovered`, held
 * likewise: alerts/provider-alerts.ts) from its newest stored probes.
 */
export async function deriveEvents(
  ctx: EventSources,
  limit: number,
  staleAfterS: number,
  now: Date,
  watch: EventWatch = { schedules: [], holdMs: 60_000, thisNode: 'this-node' },
): Promise<EventList> {
  const windows = ctx.windows ?? plainWindows(ctx.store.series);
  const errors: string[] = [];
  // The schedules' and the pulse's events are extra: one that cannot be read is named in `errors`, and the rest answers.
  const extra = <T>(what: string, read: () => Promise<T[]>) =>
    read().catch((err: unknown) => {
      errors.push(`${what}: could not be read (${codeOf(err)})`);
      return [] as T[];
    });
  const providers = watch.providers ?? [];
  const [heartbeat, scoreboard, scheduled, pulses, providerAlerts, known] = await Promise.all([
    ctx.store.series.heartbeat(),
    readStateDocument(ctx.dataDir, 'scoreboard'),
    watch.schedules.length ? extra('schedules', () => allScheduleEvents(ctx.store, watch.schedules, now)) : [],
    extra('pulse alerts', () => allPulseAlerts(ctx.store.series, watch.holdMs, watch.thisNode, now, windows)),
    providers.length ? extra('provider alerts', () => allProviderAlerts(ctx.store.probes, providers, watch.holdMs, now)) : [],
    extra('nodes', () => ctx.store.series.nodes()),
  ]);
  const events: EstateEvent[] = [
    ...scheduled.map((e) => ({ ...e, source: 'schedule' as const })),
    ...pulses.map((e) => ({ ...e, source: 'pulse' as const })),
    ...providerAlerts.map((e) => ({ ...e, source: 'provider' as const })),
  ];
  const nodes = heartbeatNodes(heartbeat, errors);
  let skipped = nodes.skipped;

  const beats = new Map<string, number>();
  for (const { name, seen, status } of nodes.nodes) {
    events.push({ ts: new Date(seen).toISOString(), kind: 'heartbeat', source: 'heartbeat', subject: name, message: `${name} reported ${status}` });
    beats.set(name, Math.max(seen, beats.get(name) ?? -Infinity));
  }
  // Stale spells, from each node's newest trend points and its heartbeat (alerts/node-gaps.ts).
  const inSeries = new Set(known);
  const spells = await extra('node spells', () =>
    mapBounded([...new Set([...beats.keys(), ...known])], CONCURRENT_NODES, async (name) => {
      const trends = inSeries.has(name) ? (await windows.window('trends', name, NODE_GAP_WINDOW, (r) => timeOf(r.ts))).items : [];
      const sent = trends.filter((t): t is number => t !== undefined);
      const seen = sent.reduce((a, b) => Math.max(a, b), beats.get(name) ?? -Infinity);
      return nodeGapEvents(name, sent, staleAfterS * 1000, Number.isFinite(seen) ? seen : undefined, now.getTime());
    }),
  );
  for (const list of spells) for (const e of list) events.push({ ...e, source: 'heartbeat' });

  for (const entry of entriesOf(scoreboard, ['entries', 'scores'], errors)) {
    const name = nameOf(entry);
    const ts = timeOf(entry.ts ?? entry.updated_at);
    if (!name || ts === undefined) {
      skipped++;
      continue;
    }
    const delta = typeof entry.delta === 'number' && entry.delta !== 0 ? ` (${entry.delta > 0 ? '+' : ''}${entry.delta})` : '';
    events.push({
      ts: new Date(ts).toISOString(),
      kind: 'score',
      source: 'scoreboard',
      subject: name,
      message: `${name} scored ${String(entry.score ?? 'n/a')}${delta}`,
    });
  }

  sortNewestFirst(events);
  const items = events.slice(0, limit);
  return { items, count: items.length, limit, stale_after_s: staleAfterS, skipped_entries: skipped, errors };
}

function sortNewestFirst(events: EstateEvent[]): void {
  events.sort((a, b) => (a.ts < b.ts ? 1 : a.ts > b.ts ? -1 : a.subject.localeCompare(b.subject)));
}

/** The code alone of a read that failed (an errno name, an estate error code): its message may hold a path. */
function codeOf(err: unknown): string {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' ? code : 'error';
}

/** A node's entry in the heartbeat: its name, when it was last seen (ms since the epoch), its status (`unknown` when it has none). */
export interface HeartbeatNode {
  name: string;
  seen: number;
  status: string;
}

/**
 * The entries of a heartbeat document (any shape `estateEvents` accepts)
 * that have a name and a time; `skipped` counts the others, and a document
 * that cannot be read as a heartbeat is said in `errors`.
 */
export function heartbeatNodes(doc: StateDocument, errors: string[]): { nodes: HeartbeatNode[]; skipped: number } {
  const nodes: HeartbeatNode[] = [];
  let skipped = 0;
  for (const node of entriesOf(doc, ['nodes', 'entries'], errors)) {
    const name = nameOf(node);
    const seen = timeOf(node.last_seen ?? node.ts);
    if (!name || seen === undefined) skipped++;
    else nodes.push({ name, seen, status: typeof node.status === 'string' ? node.status : 'unknown' });
  }
  return { nodes, skipped };
}

function entriesOf(doc: StateDocument, keys: string[], errors: string[]): Entry[] {
  if (!doc.exists) return [];
  if (doc.error) {
    errors.push(`state/${doc.name}.json: ${doc.error}`);
    return [];
  }
  let list: unknown = doc.data;
  if (isObject(list)) {
    const key = keys.find((k) => k in (list as Entry));
    if (key === undefined) {
      errors.push(`state/${doc.name}.json: expected a "${keys[0]}" list`);
      return [];
    }
    list = (list as Entry)[key];
  }
  if (Array.isArray(list)) return list.filter(isObject);
  if (isObject(list)) return Object.entries(list).map(([name, v]) => (isObject(v) ? { name, ...v } : { name, score: v }));
  errors.push(`state/${doc.name}.json: expected a list of entries`);
  return [];
}

function isObject(v: unknown): v is Entry {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function nameOf(e: Entry): string | undefined {
  const name = e.name ?? e.node ?? e.agent;
  return typeof name === 'string' && name ? name : undefined;
}

/** The first and last millisecond of years 0000 to 9999: the range an ISO 8601 `ts` can say in its usual form. */
const EARLIEST = Date.parse('0000-01-01T00:00:00.000Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * An entry's time in ms since the epoch, or undefined when it is not a time
 * of years 0000 to 9999 (a date string, or Unix seconds below 1e12, else
 * milliseconds): a value out of that range (`9e15`, nanoseconds) is the
 * entry's fault and skips it, as a missing time does.
 */
export function timeOf(v: unknown): number | undefined {
  const t = typeof v === 'string' ? Date.parse(v) : typeof v === 'number' ? v * (v < 1e12 ? 1000 : 1) : NaN;
  return Number.isFinite(t) && t >= EARLIEST && t <= LATEST ? t : undefined;
}
