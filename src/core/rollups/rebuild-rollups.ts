import { randomBytes } from 'node:crypto';
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../atomic-write.ts';
import { dataPath } from '../data-files.ts';
import { withFileLock } from '../file-lock.ts';
import { ensureFolder } from '../jsonl/append-record.ts';
import { foldLog } from './fold-log.ts';
import { ROLLUP_TIERS, type RangeSeries, type RollupBucket, type RollupRetention, type RollupTier } from './range-types.ts';
import { periodFile, periodSpan, removePeriod, RollupReader, rollupFolder, storedPeriods } from './rollup-files.ts';
import { RollupFold } from './rollup-fold.ts';
import { pruneRollupFiles } from './rollup-retention.ts';
import { lockFileOf, readRollupState, recoverPending, writeRollupState } from './rollup-state.ts';

/** What a rebuild did. */
export interface RollupRebuild {
  /** Raw records folded in. */
  records: number;
  /** Period files written, and removed by the retention. */
  periods: number;
  pruned: number;
}

/**
 * `estate rollups rebuild` on the data dir: the rollups of `series`
 * computed again from the whole raw log, under the rollups' lock. Buckets
 * before the raw log's oldest record (what only the rollups still hold,
 * the raw records pruned) are kept; from the bucket of that record on, each
 * period file is replaced, atomically, by the buckets of the raw records,
 * one line per bucket. The retention is applied, and the state set to the
 * end of what was read: the server carries on from there.
 */
export async function rebuildRollups(dataDir: string, series: RangeSeries, retention: RollupRetention, nowMs = Date.now()): Promise<RollupRebuild> {
  const lock = lockFileOf(dataDir, series);
  await ensureFolder(lock);
  return withFileLock(lock, async () => {
    await recoverPending(dataDir, series);
    const before = await readRollupState(dataDir, series);
    const folder = rollupFolder(dataDir, series);
    const temp = path.join(folder, `.rebuild-${process.pid}-${randomBytes(4).toString('hex')}`);
    try {
      const { state, folded } = await foldLog(dataDir, series, dataPath(dataDir, series), undefined, { into: temp });
      const reader = new RollupReader();
      let periods = 0;
      for (const { tier, width } of ROLLUP_TIERS) {
        const cut = state.oldest_ms === null ? Number.POSITIVE_INFINITY : Math.floor(state.oldest_ms / 1000 / width) * width;
        const fresh = await storedPeriodsUnder(temp, tier);
        const live = await storedPeriods(dataDir, series, tier);
        for (const period of [...new Set([...live, ...fresh])].sort()) {
          if (periodSpan(tier, period).endMs <= cut * 1000) continue;
          const fold = new RollupFold(series);
          const target = periodFile(dataDir, series, tier, period);
          for (const bucket of await reader.read(target)) if (bucket.b < cut) fold.merge(tier, bucket);
          if (fresh.includes(period)) for (const bucket of await reader.read(path.join(temp, tier, `${period}.jsonl`))) fold.merge(tier, bucket);
          const buckets = fold.buckets(tier);
          if (!buckets.length) await removePeriod(target);
          else {
            await ensureFolder(target);
            await writeFileAtomic(target, linesOf(buckets));
            periods++;
          }
        }
      }
      const pruned = await pruneRollupFiles(dataDir, series, retention, nowMs);
      const oldest = [before?.oldest_ms, state.oldest_ms].filter((v): v is number => typeof v === 'number');
      await writeRollupState(dataDir, series, { ...state, oldest_ms: oldest.length ? Math.min(...oldest) : null, pruned_at: nowMs });
      return { records: folded, periods, pruned };
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
  }, { timeoutMs: 60_000 });
}

function linesOf(buckets: readonly RollupBucket[]): string {
  return buckets.map((b) => `${JSON.stringify(b)}\n`).join('');
}

async function storedPeriodsUnder(temp: string, tier: RollupTier): Promise<string[]> {
  try {
    return (await readdir(path.join(temp, tier))).filter((n) => n.endsWith('.jsonl')).map((n) => n.slice(0, -6)).sort();
  } catch {
    return [];
  }
}
