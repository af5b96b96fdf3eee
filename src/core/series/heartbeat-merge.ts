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
import { heartbeatShapeProblem, withHeartbeatEntry } from './heartbeat-document.ts';

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
    const merged = withHeartbeatEntry(parsed.heartbeat, entry);
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
  const problem = heartbeatShapeProblem(value, 'state/heartbeat.json');
  return problem === undefined ? { heartbeat: value } : { problem };
}
