import path from 'node:path';
import { writeFileAtomic } from '../atomic-write.ts';
import { dataPath } from '../data-files.ts';
import { withFileLock } from '../file-lock.ts';
import { ensureFolder } from '../jsonl/append-record.ts';
import { readDataFile } from '../open-data-file.ts';
import type { SeriesName, SeriesPruneResult, Store } from '../store/store.ts';

/** How often retention runs: once an hour at most, whoever applies it (collectors, --once runs, servers of one data dir). */
export const RETENTION_EVERY_MS = 60 * 60 * 1000;

/** How far ahead of a process's `now` the time of the last pass may be and still be one it sees as done (see applyRetention). */
const SAME_MOMENT_MS = 60_000;

/** The series retention prunes through the Store (builds are other tools', pruned by `estate prune` alone). */
const RETAINED_SERIES: readonly SeriesName[] = ['trends', 'disk', 'pulse'];

/** `collect/pruned-at` in `dataDir`: when a collector or a server last applied collect.retention (ISO 8601). */
export function prunedAtFile(dataDir: string): string {
  return path.join(dataPath(dataDir, 'collectState'), 'pruned-at');
}

/**
 * Applies `collect.retention` (DESIGN.md 7a) to the store's series when it
 * is due: when nothing sharing `dataDir` (a collector, a run of --once, a
 * server) has in the last RETENTION_EVERY_MS. The time is kept in
 * `collect/pruned-at`, read and written under its lock, so of several
 * processes due at once one prunes and the others see its time. Each series
 * is pruned through `store.series.prune` (data dir: renamed under the log's lock, a
 * log with nothing older than the cutoff read once and not rewritten;
 * PostgreSQL: through the time index, concurrent prunes splitting the rows).
 * Answers what each series dropped, or undefined when it was not due.
 */
export async function applyRetention(store: Store, dataDir: string, retentionMs: number, now: Date = new Date()): Promise<Record<SeriesName, SeriesPruneResult> | undefined> {
  const stamp = prunedAtFile(dataDir);
  await ensureFolder(stamp);
  const due = await withFileLock(`${stamp}.lock`, async (lock) => {
    const last = await readDataFile(stamp).then((text) => Date.parse(text.trim()), () => NaN);
    // A time a little ahead of `now` is another process's that was due at the same moment and took the lock
    // first (its clock read later than ours, before ours waited for the lock); one far ahead is a wrong clock's.
    if (!Number.isNaN(last) && last <= now.getTime() + SAME_MOMENT_MS && now.getTime() - last < RETENTION_EVERY_MS) return false;
    await lock.check();
    await writeFileAtomic(stamp, `${now.toISOString()}\n`);
    return true;
  });
  if (!due) return undefined;
  const cutoff = new Date(now.getTime() - retentionMs);
  const counts = {} as Record<SeriesName, SeriesPruneResult>;
  for (const series of RETAINED_SERIES) counts[series] = await store.series.prune(series, cutoff);
  return counts;
}
