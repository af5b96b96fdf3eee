import type { HeartbeatEntry } from '../collect/sample-types.ts';
import { timeOf } from '../events/estate-events.ts';
import type { SeriesSample } from '../store/store.ts';

// The heartbeat document's merge rules (DESIGN.md 7a), one piece of code for
// every store: the data dir's `state/heartbeat.json` (heartbeat-merge.ts) and
// PostgreSQL's heartbeat row (postgres/postgres-series.ts). Pure: no I/O.

/** How a merge treats an entry already stored for the node: `replace` it (the collector), or keep it when its `last_seen` is `newer` (the hub's ingest: samples may arrive late). */
export interface MergeOptions {
  keep?: 'newer';
}

/**
 * Why `value` (a parsed heartbeat) cannot take an entry, or undefined when it
 * can: an object with `nodes` (a list, a map by name, or absent) or a bare
 * list. `where` names the document in the answer.
 */
export function heartbeatShapeProblem(value: unknown, where: string): string | undefined {
  const nodes = isObject(value) ? value.nodes : value;
  if (Array.isArray(value) || (isObject(value) && (nodes === undefined || Array.isArray(nodes) || isObject(nodes)))) return undefined;
  return `${where} is not a heartbeat (an object with "nodes", or a list of nodes): left as it is`;
}

/**
 * `heartbeat` (which passed heartbeatShapeProblem) with each of `entries`
 * (one per node) as its node's entry; with `keep: 'newer'`, a node whose
 * stored entry was seen after the new one (its `last_seen`, read as /events
 * reads it) keeps its entry. `changed` is false when every node kept its own.
 */
export function mergeHeartbeatEntries(heartbeat: unknown, entries: readonly HeartbeatEntry[], options: MergeOptions = {}): { heartbeat: unknown; changed: boolean } {
  let merged = heartbeat;
  let changed = false;
  for (const entry of entries) {
    if (options.keep === 'newer' && keepsStored(storedEntry(merged, entry.name), entry)) continue;
    merged = withEntry(merged, entry);
    changed = true;
  }
  return { heartbeat: merged, changed };
}

/** Each node's heartbeat entry from its newest sample (by ts; the later one of equal times): what a hub's ingest merges, with `keep: 'newer'`. */
export function newestEntries(samples: readonly SeriesSample[]): HeartbeatEntry[] {
  const newest = new Map<string, SeriesSample>();
  for (const sample of samples) {
    const known = newest.get(sample.trend.node);
    if (!known || !((timeOf(known.trend.ts) ?? -Infinity) > (timeOf(sample.trend.ts) ?? -Infinity))) newest.set(sample.trend.node, sample);
  }
  return [...newest.values()].map((s) => ({ name: s.trend.node, last_seen: s.trend.ts, status: s.pulse.status }));
}

/** Whether `stored` (a stored heartbeat entry) was seen after `entry`, or is it (the same time and status: a resent batch, nothing to write). */
function keepsStored(stored: Record<string, unknown> | undefined, entry: HeartbeatEntry): boolean {
  const storedAt = stored === undefined ? undefined : timeOf(stored.last_seen ?? stored.ts);
  const given = timeOf(entry.last_seen);
  if (storedAt === undefined || given === undefined) return false;
  return storedAt > given || (storedAt === given && stored?.status === entry.status);
}

/** The stored entry of node `name`, in any of the shapes withEntry writes. */
function storedEntry(heartbeat: unknown, name: string): Record<string, unknown> | undefined {
  const nodes = Array.isArray(heartbeat) ? heartbeat : (heartbeat as Record<string, unknown>).nodes;
  if (isObject(nodes)) return isObject(nodes[name]) ? nodes[name] : undefined;
  if (!Array.isArray(nodes)) return undefined;
  return nodes.find((n): n is Record<string, unknown> => isObject(n) && (n.name ?? n.node ?? n.agent) === name);
}

/**
 * `heartbeat` with `entry` as its node's entry, in the shapes `/events`
 * reads (docs/data-dir.md): `{"nodes": [...]}` (the node found by `name`,
 * `node` or `agent`), `{"nodes": {"NAME": {...}}}`, or a bare list. Its
 * other fields, and the other fields of this node's entry, are kept.
 */
function withEntry(heartbeat: unknown, entry: HeartbeatEntry): unknown {
  if (Array.isArray(heartbeat)) return mergeInList(heartbeat, entry);
  const file = heartbeat as Record<string, unknown>;
  if (isObject(file.nodes)) {
    const { name, ...fields } = entry;
    return { ...file, nodes: { ...file.nodes, [name]: { ...(isObject(file.nodes[name]) ? file.nodes[name] : {}), ...fields } } };
  }
  return { ...file, nodes: mergeInList(Array.isArray(file.nodes) ? file.nodes : [], entry) };
}

function mergeInList(nodes: unknown[], entry: HeartbeatEntry): unknown[] {
  const at = nodes.findIndex((n) => isObject(n) && (n.name ?? n.node ?? n.agent) === entry.name);
  if (at === -1) return [...nodes, { ...entry }];
  return nodes.map((n, i) => (i === at ? { ...(n as object), ...entry } : n));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
