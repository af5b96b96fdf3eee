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

/** What a heartbeat merge did: `merged`, or `unreadable` (the file was left exactly as it was; `problem` says why). */
export type HeartbeatOutcome = { outcome: 'merged' } | { outcome: 'unreadable'; problem: string };

/** `state/heartbeat.json` in `dataDir`. */
export function heartbeatFile(dataDir: string): string {
  return path.join(dataPath(dataDir, 'state'), 'heartbeat.json');
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
export async function mergeHeartbeat(dataDir: string, entry: HeartbeatEntry): Promise<HeartbeatOutcome> {
  const file = heartbeatFile(dataDir);
  await ensureFolder(file);
  return withFileLock(logLockFile(file), async (lock) => {
    let text: string | undefined;
    let mode = 0o600;
    try {
      text = await readDataFile(file);
      mode = (await stat(file)).mode & 0o777;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const parsed = text === undefined ? { heartbeat: { nodes: [] } } : parseHeartbeat(text);
    if ('problem' in parsed) return { outcome: 'unreadable', problem: parsed.problem };
    const merged = withEntry(parsed.heartbeat, entry);
    await writeFileAtomic(file, `${JSON.stringify(merged, null, 2)}\n`, mode, () => {
      lock.checkSync();
      return true;
    });
    return { outcome: 'merged' };
  });
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
