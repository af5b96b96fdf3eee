import path from 'node:path';
import { writeFileAtomic } from '../atomic-write.ts';
import { dataPath } from '../data-files.ts';
import { ensureFolder } from '../jsonl/append-record.ts';
import { readDataFile } from '../open-data-file.ts';
import type { PruneCounts } from '../retention/prune-file.ts';
import { pruneLog } from '../retention/prune-log.ts';

/** How often a collector prunes the series it writes: once an hour at most, in a loop or over runs of --once. */
export const RETENTION_EVERY_MS = 60 * 60 * 1000;

/** The series logs the collector writes, and so prunes (builds are other tools'). */
const COLLECTED_LOGS = ['trends', 'disk', 'pulse'] as const;

/** `collect/pruned-at` in `dataDir`: when a collector last applied collect.retention (ISO 8601). */
export function prunedAtFile(dataDir: string): string {
  return path.join(dataPath(dataDir, 'collectState'), 'pruned-at');
}

/**
 * Applies `collect.retention` (DESIGN.md 7a) to the series logs of the data
 * dir when it is due: when no collector of this data dir has in the last
 * RETENTION_EVERY_MS (the time is kept in `collect/pruned-at`, so cron runs
 * of --once prune once an hour too). Each log is pruned as `estate prune`
 * does (pruneLog: under its lock; a log with nothing older than the cutoff
 * is read once and not rewritten). Answers the counts per log, or undefined
 * when it was not due.
 */
export async function applyRetention(dataDir: string, retentionMs: number, now: Date = new Date()): Promise<Record<string, PruneCounts> | undefined> {
  const stamp = prunedAtFile(dataDir);
  const last = await readDataFile(stamp).then((text) => Date.parse(text.trim()), () => NaN);
  if (!Number.isNaN(last) && last <= now.getTime() && now.getTime() - last < RETENTION_EVERY_MS) return undefined;
  await ensureFolder(stamp);
  await writeFileAtomic(stamp, `${now.toISOString()}\n`);
  const cutoff = new Date(now.getTime() - retentionMs);
  const counts: Record<string, PruneCounts> = {};
  for (const log of COLLECTED_LOGS) counts[log] = await pruneLog(dataDir, log, cutoff);
  return counts;
}
