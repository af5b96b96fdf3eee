import { ROLLUP_TIERS, type RollupRetention, type RollupTier, type Tier } from './range-types.ts';
import { rangeStep } from './range-step.ts';

/** What a store knows of its tiers when it answers a range. */
export interface TierCoverage {
  /** The oldest raw record's time (ms), undefined when the series has none. */
  rawOldestMs: number | undefined;
  /** Per rollup tier: undefined when it is not built (or not current); else its oldest bucket's start (ms; undefined when it holds none). */
  rollups: Readonly<Record<RollupTier, { oldestMs: number | undefined } | undefined>>;
  retention: RollupRetention;
  nowMs: number;
}

/**
 * The tier that answers `[fromMs, toMs)` at `stepS` (rangeStep), and the
 * step it answers at. The rule (docs/data-dir.md, "Rollups"):
 *
 * 1. the coarsest rollup whose width divides the step (1h when the step is
 *    a whole number of hours, else 1m when it is of minutes), if it is
 *    built and its retention reaches back to `from`;
 * 2. else the raw series, if it holds the range: its oldest record is at
 *    or before `from`, or no rollup holds anything older than it (nothing
 *    was pruned that a rollup kept);
 * 3. else the finest rollup that is built and whose retention reaches back
 *    to `from` (else the 1h one, built), with the step raised to its width
 *    at least (a range the raw series no longer holds);
 * 4. else the raw series, with what it holds.
 */
export function chooseTier(fromMs: number, toMs: number, points: number, stepS: number, cover: TierCoverage): { tier: Tier; stepS: number } {
  const retained = (tier: RollupTier) => cover.rollups[tier] !== undefined && fromMs >= cover.nowMs - cover.retention[tier];
  for (const { tier, width } of [...ROLLUP_TIERS].reverse()) {
    if (stepS % width === 0 && retained(tier)) return { tier, stepS };
  }
  const raw = cover.rawOldestMs;
  const olderInRollups = ROLLUP_TIERS.some(({ tier }) => {
    const oldest = cover.rollups[tier]?.oldestMs;
    return oldest !== undefined && (raw === undefined || oldest < raw - 3_600_000);
  });
  if (raw !== undefined && (raw <= fromMs || !olderInRollups)) return { tier: 'raw', stepS };
  const fallback = ROLLUP_TIERS.find(({ tier }) => retained(tier)) ?? (cover.rollups['1h'] ? ROLLUP_TIERS[1] : undefined);
  if (fallback) return { tier: fallback.tier, stepS: rangeStep(fromMs, toMs, points, Math.max(stepS, fallback.width)) };
  return { tier: 'raw', stepS };
}
