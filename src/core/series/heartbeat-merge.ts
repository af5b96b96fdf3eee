import { stat } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../atomic-write.ts';
import { dataPath } from '../data-files.ts';
import { withFileLock } from '../file-lock.ts';
import { isNotFound } from '../fs-errors.ts';
import { ensureFolder } from '../jsonl/append-record.ts';
import { readDataFile } from '../open-data-file.ts';
import { logLockFile } from '../retention/prune-file.ts';
import type { HeartbeatEntry } from '../collect/sample-types.ts';
import { timeOf } from '../events.ts';
import { canonicalJson } from '../keyed-log.ts';

/** What a heartbeat merge did: `merged`, or `unreadable` (the file was left exactly as it was; `problem` says why). */
export type HeartbeatOutcome = { outcome: 'merged' } | { outcome: 'unreadable'; problem: string };

/** `state/heartbeat.json` in `dataDir`. */
export function heartbeatFile(dataDir: string): string {
  return path.join(dataPath(dataDir, 'state'), 'heartbeat.json');
}

/** How a merge treats an entry already stored for the node: replaced (the collector), or, with `keep: 'newer'`, kept when its `last_seen` is newer (the hub's ingest: samples may arrive late). */
export interface MergeOptions {
  keep?: 'newer';
}

/**
 * Puts `entry` in `state/heartbeat.json` as the entry of its node
 * (`{"nodes": [{"name", "last_seen", "status", …}]}`, DESIGN.md 7a), under
 * the file's lock (`<file>.lock`), atomically (temp file + rename). Every
 * other entry, every unknown field (of the file and of this node's entry)
 * stays as it was, in whichever shape `/events` reads the file has (a
 * `nodes` list or map, a bare list). A file that is not valid JSON, or not
 * one of those shapes, is never overwritten: the answer is `unreadable`.
 */
export function mergeHeartbeat(dataDir: string, entry: HeartbeatEntry, options: MergeOptions = {}): Promise<HeartbeatOutcome> {
  return mergeHeartbeats(dataDir, [entry], options);
}

/**
 * `mergeHeartbeat` of several nodes' entries in one write (one entry per
 * node). With `keep: 'newer'`, a node whose stored entry was seen after the
 * new one (its `last_seen`, read as /events reads it), or is the same
 * sample's, keeps its entry; when every node does, nothing is written.
 */
export async function mergeHeartbeats(dataDir: string, entries: readonly HeartbeatEntry[], options: MergeOptions = {}): Promise<HeartbeatOutcome> {
  const file = heartbeatFile(dataDir);
  await ensureFolder(file);
  return withFileLock(logLockFile(file), async (lock) => {
    const stored = await readHeartbeatText(file);
    const parsed = stored === undefined ? { heartbeat: { nodes: [] } } : parseHeartbeat(stored.text);
    if ('problem' in parsed) return { outcome: 'unreadable', problem: parsed.problem };
    let merged = parsed.heartbeat;
    let changed = false;
    for (const entry of entries) {
      if (options.keep === 'newer' && keepsStored(storedEntry(merged, entry.name), entry)) continue;
      merged = withEntry(merged, entry);
      changed = true;
    }
    if (!changed) return { outcome: 'merged' };
    await writeFileAtomic(file, `${JSON.stringify(merged, null, 2)}\n`, stored?.mode ?? 0o600, () => {
      lock.checkSync();
      return true;
    });
    return { outcome: 'merged' };
  });
}

/**
 * Makes `data` the heartbeat unless one is stored (a store copy): `created`,
 * `present` when the stored one is equal (whatever its key order or
 * layout), `conflict` when it is another, or not valid JSON (kept as it is).
 */
export async function restoreHeartbeat(dataDir: string, data: unknown): Promise<'created' | 'present' | 'conflict'> {
  const file = heartbeatFile(dataDir);
  await ensureFolder(file);
  return withFileLock(logLockFile(file), async (lock) => {
    const stored = await readHeartbeatText(file);
    if (stored !== undefined) {
      try {
        return canonicalJson(JSON.parse(stored.text)) === canonicalJson(data) ? 'present' : 'conflict';
      } catch {
        return 'conflict';
      }
    }
    await writeFileAtomic(file, `${JSON.stringify(data, null, 2)}\n`, 0o600, () => {
      lock.checkSync();
      return true;
    });
    return 'created';
  });
}

/** The heartbeat's text and mode, or undefined when there is none. */
async function readHeartbeatText(file: string): Promise<{ text: string; mode: number } | undefined> {
  try {
    const text = await readDataFile(file);
    return { text, mode: (await stat(file)).mode & 0o777 };
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** Whether `stored` (a stored heartbeat entry) was seen after `entry`, or is it (same time and status: nothing to write). */
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

function parseHeartbeat(text: string): { heartbeat: unknown } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { problem: `state/heartbeat.json is not valid JSON (${(err as Error).message}): left as it is` };
  }
  const nodes = isObject(value) ? value.nodes : value;
  if (!Array.isArray(value) && !(isObject(value) && (nodes === undefined || Array.isArray(nodes) || isObject(nodes)))) {
    return { problem: 'state/heartbeat.json is not a heartbeat (an object with "nodes", or a list of nodes): left as it is' };
  }
  return { heartbeat: value };
}

/**
 * `heartbeat` with `entry` as its node's entry, in the shapes `/events`
 * reads (docs/data-dir.md): `{"nodes": [...]}` (the node found by `name`,
 * `node` or `agent`), `{"nodes": {"NAME": {...}}}`, or a bare list. Its
 * other fields are kept.
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
