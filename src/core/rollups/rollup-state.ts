import { createHash } from 'node:crypto';
import { truncate, unlink } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../atomic-write.ts';
import { isNotFound } from '../fs-errors.ts';
import { ensureFolder } from '../jsonl/append-record.ts';
import { readDataFile } from '../open-data-file.ts';
import { rollupFolder } from './rollup-files.ts';
import type { RangeSeries } from './range-types.ts';

// Where the data dir's rollups of a series stand against its raw log
// (rollups/<series>/state.json), and the journal that makes an append of
// rollup lines all or nothing (rollups/<series>/pending.json).

export interface RollupState {
  version: 1;
  /** The raw log folded in (`dev:ino`). */
  identity: string;
  /** Bytes of it folded in: up to the end of a complete line. */
  offset: number;
  /** The last line folded in (its length and SHA-1), to find the place again in a log a prune rewrote. */
  last: { length: number; sha1: string } | null;
  /** The oldest and newest raw record times folded in and kept (ms). */
  oldest_ms: number | null;
  newest_ms: number | null;
  /** When the rollups' retention last ran (ms). */
  pruned_at: number | null;
}

export function stateFile(dataDir: string, series: RangeSeries): string {
  return path.join(rollupFolder(dataDir, series), 'state.json');
}

export function lockFileOf(dataDir: string, series: RangeSeries): string {
  return path.join(rollupFolder(dataDir, series), 'rollups.lock');
}

function pendingFile(dataDir: string, series: RangeSeries): string {
  return path.join(rollupFolder(dataDir, series), 'pending.json');
}

/** The state of a series' rollups, undefined when they were never built (or the state is unreadable: then they are built again). */
export async function readRollupState(dataDir: string, series: RangeSeries): Promise<RollupState | undefined> {
  try {
    const value = JSON.parse(await readDataFile(stateFile(dataDir, series))) as RollupState;
    return value && value.version === 1 && typeof value.identity === 'string' && typeof value.offset === 'number' ? value : undefined;
  } catch (err) {
    if (isNotFound(err) || err instanceof SyntaxError) return undefined;
    throw err;
  }
}

export async function writeRollupState(dataDir: string, series: RangeSeries, state: RollupState): Promise<void> {
  const file = stateFile(dataDir, series);
  await ensureFolder(file);
  await writeFileAtomic(file, `${JSON.stringify(state)}\n`);
}

/** The SHA-1 of a line's bytes (without its newline). */
export function lineSha1(bytes: Uint8Array): string {
  return createHash('sha1').update(bytes).digest('hex');
}

/**
 * Runs `write` (appends to the files named in `sizes`, each at the size
 * given) so that a crash midway is undone at the next `recoverPending`:
 * the sizes are journalled first, and the journal is removed once `write`
 * and `commit` (the state saying those lines are in) are done.
 */
export async function journalled(dataDir: string, series: RangeSeries, sizes: Readonly<Record<string, number>>, write: () => Promise<void>, commit: () => Promise<void>): Promise<void> {
  const file = pendingFile(dataDir, series);
  await ensureFolder(file);
  await writeFileAtomic(file, `${JSON.stringify(sizes)}\n`);
  await write();
  await commit();
  await unlink(file);
}

/** Cuts every file a journal names back to its size then (an append the state never took), and removes the journal. */
export async function recoverPending(dataDir: string, series: RangeSeries): Promise<void> {
  const file = pendingFile(dataDir, series);
  let sizes: Record<string, number>;
  try {
    sizes = JSON.parse(await readDataFile(file)) as Record<string, number>;
  } catch (err) {
    if (isNotFound(err)) return;
    if (!(err instanceof SyntaxError)) throw err;
    // A journal torn before its rename cannot be: writeFileAtomic. Unreadable anyway: the appends it guarded never started.
    sizes = {};
  }
  for (const [name, size] of Object.entries(sizes)) {
    await truncate(path.join(rollupFolder(dataDir, series), name), size).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
  }
  await unlink(file);
}
