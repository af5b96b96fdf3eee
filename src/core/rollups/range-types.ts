// The shapes of a series range (DESIGN.md 7b), shared by every store and
// the API: what is asked, what is answered, and the rollup tiers.

/** The series that have ranges: the numeric ones. */
export type RangeSeries = 'trends' | 'disk';

/** What answered a range: the raw records, or a rollup of 1-minute or 1-hour buckets. */
export type Tier = 'raw' | '1m' | '1h';

/** The rollup tiers, finest first, with their bucket width in seconds. */
export const ROLLUP_TIERS = [
  { tier: '1m', width: 60 },
  { tier: '1h', width: 3600 },
] as const satisfies readonly { tier: Exclude<Tier, 'raw'>; width: number }[];

export type RollupTier = (typeof ROLLUP_TIERS)[number]['tier'];

/** How long each rollup tier keeps its buckets, in ms. */
export type RollupRetention = Readonly<Record<RollupTier, number>>;

/** The rollups' retention when the config names none (`rollups.retention`): 1-minute buckets for 30 days, 1-hour buckets for 400. */
export const DEFAULT_ROLLUP_RETENTION: RollupRetention = { '1m': 30 * 86_400_000, '1h': 400 * 86_400_000 };

/** A range to answer: `[fromMs, toMs)` in ms since the epoch, at most `points` buckets. */
export interface RangeQuery {
  fromMs: number;
  toMs: number;
  points: number;
  /** Only these fields (default: every numeric field the range holds). */
  fields?: readonly string[];
  node?: string;
  /** Disk only. */
  mount?: string;
  /** "Now", for the rollups' retention (default: the clock). */
  nowMs?: number;
}

/** One bucket of an answer: `ts` its start, `count` the raw samples it sums up. */
export interface RangeItem {
  ts: string;
  count: number;
  min: Record<string, number>;
  mean: Record<string, number>;
  max: Record<string, number>;
}

/** The answer of `/trends/range` and `/disk/range`. */
export interface RangeAnswer {
  from: string;
  to: string;
  step_s: number;
  tier: Tier;
  items: RangeItem[];
}

/** A field's sums over some samples: how many held it, their sum, min and max. */
export type FieldSums = [count: number, sum: number, min: number, max: number];

/** One rollup bucket of one group (node, or node and mount): what it sums up, per field. */
export interface RollupBucket {
  /** The bucket's start, seconds since the epoch (a multiple of its tier's width). */
  b: number;
  node?: string;
  mount?: string;
  /** Raw samples summed up. */
  n: number;
  f: Record<string, FieldSums>;
}
