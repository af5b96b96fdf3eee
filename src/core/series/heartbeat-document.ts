import type { HeartbeatEntry } from '../collect/sample-types.ts';

// The heartbeat document's merge rules (DESIGN.md 7a), one piece of code for
// every store: the data dir's `state/heartbeat.json` (heartbeat-merge.ts) and
// PostgreSQL's heartbeat row (postgres/postgres-series.ts). Pure: no I/O.

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
 * `heartbeat` with `entry` as its node's entry, in the shapes `/events`
 * reads (docs/data-dir.md): `{"nodes": [...]}` (the node found by `name`,
 * `node` or `agent`), `{"nodes": {"NAME": {...}}}`, or a bare list. Its
 * other fields, and the other fields of this node's entry, are kept.
 * `heartbeat` must have passed heartbeatShapeProblem.
 */
export function withHeartbeatEntry(heartbeat: unknown, entry: HeartbeatEntry): unknown {
  if (Array.isArray(heartbeat)) return mergeInList(heartbeat, entry);
  const file = heartbeat as Record<string, unknown>;
  if (isObject(file.nodes)) {
    const { name, ...fields } = entry;
    return { ...file, nodes: { ...file.nodes, [name]: { ...(isObject(file.nodes[name]) ? file.nodes[name] : {}), ...fields } } };
  }
  return { ...file, nodes: mergeInList(Array.isArray(file.nodes) ? file.nodes : [], entry) };
}

/**
 * Whether `heartbeat` holds an entry for `entry.name` seen later than
 * `entry.last_seen` (both read as times; an entry whose time cannot be read
 * is not newer). A hub's ingest leaves such an entry alone.
 */
export function hasNewerEntry(heartbeat: unknown, entry: HeartbeatEntry): boolean {
  const stored = entryOf(heartbeat, entry.name);
  const seen = stored === undefined ? NaN : Date.parse(String(stored.last_seen));
  return Number.isFinite(seen) && seen > Date.parse(entry.last_seen);
}

function entryOf(heartbeat: unknown, name: string): Record<string, unknown> | undefined {
  const nodes = isObject(heartbeat) ? heartbeat.nodes : heartbeat;
  if (isObject(nodes)) return isObject(nodes[name]) ? nodes[name] : undefined;
  if (!Array.isArray(nodes)) return undefined;
  return nodes.find((n): n is Record<string, unknown> => isObject(n) && (n.name ?? n.node ?? n.agent) === name);
}

function mergeInList(nodes: unknown[], entry: HeartbeatEntry): unknown[] {
  const at = nodes.findIndex((n) => isObject(n) && (n.name ?? n.node ?? n.agent) === entry.name);
  if (at === -1) return [...nodes, { ...entry }];
  return nodes.map((n, i) => (i === at ? { ...(n as object), ...entry } : n));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
