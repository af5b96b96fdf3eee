import { dataPath } from '../data-files.ts';
import { withFileLock } from '../file-lock.ts';
import { ensureFolder } from '../jsonl/append-record.ts';
import type { RangeSeries, RollupRetention } from './range-types.ts';
import { foldLog, type FoldOutcome } from './fold-log.ts';
import { lockFileOf, readRollupState, recoverPending, writeRollupState } from './rollup-state.ts';
import { pruneRollupFiles, ROLLUP_PRUNE_EVERY_MS } from './rollup-retention.ts';

/**
 * Brings the data dir's rollups of `series` up to its raw log, under the
 * rollups' lock (`rollups/<series>/rollups.lock`): undoes an append a crash
 * cut short, folds in what was appended (or, never built, the whole log:
 * fold-log.ts), and applies the rollups' retention when it is due (at most
 * once an hour). What `estate serve` runs as records arrive.
 */
export async function catchUpRollups(dataDir: string, series: RangeSeries, retention: RollupRetention, nowMs = Date.now()): Promise<FoldOutcome & { pruned: number }> {
  const lock = lockFileOf(dataDir, series);
  await ensureFolder(lock);
  return withFileLock(lock, async () => {
    await recoverPending(dataDir, series);
    const outcome = await foldLog(dataDir, series, dataPath(dataDir, series), await readRollupState(dataDir, series));
    let pruned = 0;
    if (outcome.state.pruned_at === null || nowMs - outcome.state.pruned_at >= ROLLUP_PRUNE_EVERY_MS || outcome.state.pruned_at > nowMs) {
      pruned = await pruneRollupFiles(dataDir, series, retention, nowMs);
      outcome.state = { ...outcome.state, pruned_at: nowMs };
      await writeRollupState(dataDir, series, outcome.state);
    }
    return { ...outcome, pruned };
  }, { timeoutMs: 30_000 });
}
