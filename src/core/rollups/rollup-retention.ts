import { ROLLUP_TIERS, type RangeSeries, type RollupRetention } from './range-types.ts';
import { periodFile, periodSpan, removePeriod, storedPeriods } from './rollup-files.ts';


/** How often the rollups' retention runs (at most). */
export const ROLLUP_PRUNE_EVERY_MS = 60 * 60 * 1000;

/** Removes the period files of each tier that end before `nowMs` minus its retention; answers how many. */
export async function pruneRollupFiles(dataDir: string, series: RangeSeries, retention: RollupRetention, nowMs: number): Promise<number> {
  let removed = 0;
  for (const { tier } of ROLLUP_TIERS) {
    const cutoff = nowMs - retention[tier];
    for (const period of await storedPeriods(dataDir, series, tier)) {
      if (periodSpan(tier, period).endMs > cutoff) break;
      await removePeriod(periodFile(dataDir, series, tier, period));
      removed++;
    }
  }
  return removed;
}
