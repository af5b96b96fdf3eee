import { diskUsedPct } from '../disk-usage.ts';
import { heartbeatNodes, type HeartbeatNode } from '../events/estate-events.ts';
import type { JsonRecord } from '../jsonl/parse-record.ts';
import type { Series } from '../store/store.ts';
import type { NodeSummary } from './node-summary.ts';
import { mapBounded } from '../map-bounded.ts';

export type { NodeSummary };

// The estate at a glance (`GET /nodes`, `estate nodes`; DESIGN.md 7a): every
// node the heartbeat or the series know, with its latest figures. Per node a
// few reads from the newest end of its own records (Series.newest with
// `node`), never a scan of a log.

export interface NodeList {
  items: NodeSummary[];
  count: number;
  stale_after_s: number;
  /** The heartbeat, when it cannot be read as one (its nodes are then known from the series alone). */
  errors: string[];
}

/** The newest disk snapshots read first per node: one sample's worth for most nodes. */
const DISK_FIRST = 16;
/** Read when the first window holds one sample only (a node with more file systems): up to this many. */
export const DISK_WINDOW = 256;

/** Nodes read at once: the reads of many nodes wait their turn rather than all start together. */
const CONCURRENT_NODES = 16;

/** Every node, sorted by name, with its latest figures and whether it is stale at `now`. */
export async function listNodes(series: Series, staleAfterS: number, now: Date): Promise<NodeList> {
  return (await readNodes(series, staleAfterS, now)).list;
}

/** What readNodes read of a node besides its summary: its newest disk snapshots (newest first) and its newest pulse's status. */
export interface NodeDetail {
  disks: readonly JsonRecord[];
  pulseStatus: string | undefined;
}

/** listNodes, and beside it what was read of each node on the way (NodeDetail), by name. */
export async function readNodes(series: Series, staleAfterS: number, now: Date): Promise<{ list: NodeList; details: ReadonlyMap<string, NodeDetail> }> {
  const [heartbeat, known] = await Promise.all([series.heartbeat(), series.nodes()]);
  const errors: string[] = [];
  const beats = new Map<string, HeartbeatNode>();
  for (const node of heartbeatNodes(heartbeat, errors).nodes) {
    const before = beats.get(node.name);
    if (!before || before.seen < node.seen) beats.set(node.name, node);
  }
  const names = [...new Set([...beats.keys(), ...known])].sort();
  const read = await mapBounded(names, CONCURRENT_NODES, (name) => summarize(series, name, beats.get(name), staleAfterS, now));
  const items = read.map((r) => r.summary);
  return { list: { items, count: items.length, stale_after_s: staleAfterS, errors }, details: new Map(read.map((r) => [r.summary.name, r.detail])) };
}

async function summarize(series: Series, name: string, beat: HeartbeatNode | undefined, staleAfterS: number, now: Date): Promise<{ summary: NodeSummary; detail: NodeDetail }> {
  const where = { node: name };
  const [trends, pulses, disks] = await Promise.all([series.newest('trends', 1, where), series.newest('pulse', 1, where), newestSnapshots(series, name)]);
  const trend = trends.items[0];
  const pulse = pulses.items[0];
  const trendAt = timeOf(trend?.ts);
  const seen = Math.max(beat?.seen ?? -Infinity, trendAt ?? -Infinity);
  const lastSeen = Number.isFinite(seen) ? seen : undefined;
  const summary: NodeSummary = {
    name,
    last_seen: lastSeen === undefined ? null : new Date(lastSeen).toISOString(),
    stale: lastSeen === undefined || now.getTime() - lastSeen > staleAfterS * 1000,
    status: stringOf(pulse?.status) ?? beat?.status ?? null,
    cpu_pct: numberOf(trend?.cpu_pct),
    mem_used_pct: numberOf(trend?.mem_used_pct),
    load1: numberOf(trend?.load1),
    disk_used_pct: highestUsedPct(disks),
  };
  return { summary, detail: { disks, pulseStatus: stringOf(pulse?.status) } };
}

/** The node's newest disk snapshots, newest first: enough to hold every file system of its newest sample (up to DISK_WINDOW). */
async function newestSnapshots(series: Series, node: string): Promise<JsonRecord[]> {
  const first = (await series.newest('disk', DISK_FIRST, { node })).items;
  const oneSample = first.length === DISK_FIRST && first.every((s) => s.ts === first[0]?.ts);
  return oneSample ? (await series.newest('disk', DISK_WINDOW, { node })).items : first;
}

/** The highest used share among the snapshots taken with the newest of them (one sample's file systems), as `df` shows it (disk-usage.ts). */
export function highestUsedPct(newestFirst: readonly JsonRecord[]): number | null {
  const first = newestFirst[0];
  if (!first) return null;
  let highest: number | null = null;
  for (const snapshot of newestFirst) {
    if (snapshot.ts !== first.ts) break;
    const used = numberOf(snapshot.used_bytes);
    const free = numberOf(snapshot.free_bytes);
    if (used === null || free === null || used < 0 || free < 0 || used + free === 0) continue;
    const pct = diskUsedPct({ used_bytes: used, free_bytes: free });
    if (highest === null || pct > highest) highest = pct;
  }
  return highest;
}

function numberOf(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

function stringOf(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function timeOf(v: unknown): number | undefined {
  const t = typeof v === 'string' ? Date.parse(v) : NaN;
  return Number.isFinite(t) ? t : undefined;
}
