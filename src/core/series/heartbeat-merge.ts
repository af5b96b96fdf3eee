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
import { canonicalJson } from '../keyed-log.ts';
import { heartbeatShapeProblem, mergeHeartbeatEntries, type MergeOptions } from './heartbeat-document.ts';

/** What a heartbeat merge did: `merged`, or `unreadable` (the file was left exactly as it was; `problem` says why). */
export type HeartbeatOutcome = { outcome: 'merged' } | { outcome: 'unreadable'; problem: string };

/** `state/heartbeat.json` in `dataDir`. */
export function heartbeatFile(dataDir: string): string {
  return path.join(dataPath(dataDir, 'state'), 'heartbeat.json');
}

export type { MergeOptions };

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
    const { heartbeat: merged, changed } = mergeHeartbeatEntries(parsed.heartbeat, entries, options);
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

function parseHeartbeat(text: string): { heartbeat: unknown } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { problem: `state/heartbeat.json is not valid JSON (${(err as Error).message}): left as it is` };
  }
  const problem = heartbeatShapeProblem(value, 'state/heartbeat.json');
  if (problem !== undefined) return { problem };
  return { heartbeat: value };
}
