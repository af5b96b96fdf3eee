// The bucket grid of a range (DESIGN.md 7b): buckets of a "nice" width,
// aligned to the epoch, so a rollup's 1-minute and 1-hour buckets each fall
// in exactly one bucket of any grid whose step they divide.

const DAY = 86_400;
/** The nice steps up to a day, in seconds; past a day: 1, 2, 5 × 10^k days. */
const NICE = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, DAY];

/** Every nice step, ascending, without end. */
function* niceSteps(): Generator<number> {
  yield* NICE;
  for (let scale = 1; ; scale *= 10) for (const k of [2, 5, 10]) yield k * scale * DAY;
}

/** How many buckets of `stepS` seconds, aligned to the epoch, meet `[fromMs, toMs)` (0 for an empty range). */
export function gridBuckets(fromMs: number, toMs: number, stepS: number): number {
  if (toMs <= fromMs) return 0;
  const step = stepS * 1000;
  return Math.floor((toMs - 1) / step) - Math.floor(fromMs / step) + 1;
}

/**
 * The step of a range: the smallest nice step (1, 2, 5, 10, 15, 30 s; 1, 2,
 * 5, 10, 15, 30 min; 1, 2, 3, 6, 12 h; 1, 2, 5, 10, 20, 50… days) whose
 * epoch-aligned grid has at most `points` buckets meeting `[fromMs, toMs)`,
 * and at least `atLeastS`.
 *
 * @example rangeStep(Date.parse('2026-11-20T00:00:00Z'), Date.parse('2026-11-21T00:00:00Z'), 300) // 300
 */
export function rangeStep(fromMs: number, toMs: number, points: number, atLeastS = 1): number {
  for (const step of niceSteps()) {
    if (step >= atLeastS && gridBuckets(fromMs, toMs, step) <= points) return step;
  }
  throw new Error('unreachable: the nice steps have no end');
}
