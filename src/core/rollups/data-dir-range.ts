import { dataPath } from '../data-files.ts';
import { isNotFound } from '../fs-errors.ts';
import { parseRecord } from '../jsonl/parse-record.ts';
import { openDataFileInfo } from '../open-data-file.ts';
import type { RecordLog } from '../record-log.ts';
import { seriesFacet } from '../series/series-logs.ts';
import { BucketSums } from './bucket-sums.ts';
import { chooseTier, type TierCoverage } from './choose-tier.ts';
import { acceptable, forEachLine } from './fold-log.ts';
import { rangeStep } from './range-step.ts';
import { rfc3339Ms } from './range-time.ts';
import { ROLLUP_TIERS, type RangeAnswer, type RangeQuery, type RangeSeries, type RollupBucket, type RollupRetention, type RollupTier, type Tier } from './range-types.ts';
import { periodFile, periodsBetween, periodSpan, RollupReader, storedPeriods } from './rollup-files.ts';
import { RollupFold } from './rollup-fold.ts';
import { readRollupState } from './rollup-state.ts';

/** Raw bytes past the rollups' state that a read folds in itself (the server keeps them current; past this they are behind, and not used while the raw series holds the range). */
const MAX_TAIL_BYTES = 32 * 1024 * 1024;
/** How much of the raw log's start is read for its oldest record's time. */
const HEAD_BYTES = 256 * 1024;

export interface DataDirRange {
  range(series: RangeSeries, query: RangeQuery): Promise<RangeAnswer>;
}

/**
 * The range routes on the data dir (DESIGN.md 7b): the step (rangeStep),
 * the tier (chooseTier), then the buckets from the rollup files
 * (rollups/<series>/<tier>/…, with the raw lines appended since the rollups'
 * state folded in as they are read) or from the raw log through its index's
 * time column (`RecordLog.window`: the range's records only).
 */
export function dataDirRange(dataDir: string, logOf: (series: RangeSeries) => RecordLog, retention: RollupRetention): DataDirRange {
  const reader = new RollupReader();
  return {
    async range(series, query) {
      const nowMs = query.nowMs ?? Date.now();
      const { fromMs, toMs, points } = query;
      const step = rangeStep(fromMs, toMs, points);
      const rollups = await rollupCoverage(dataDir, series);
      const cover: TierCoverage = {
        rawOldestMs: await rawOldest(dataPath(dataDir, series)),
        rollups: Object.fromEntries(ROLLUP_TIERS.map(({ tier }) => [tier, rollups && { oldestMs: rollups.oldestMs[tier] }])) as TierCoverage['rollups'],
        retention,
        nowMs,
      };
      // A rollup not current answers only where the raw series cannot.
      if (rollups && !rollups.current) {
        const asIf = chooseTier(fromMs, toMs, points, step, { ...cover, rollups: { '1m': undefined, '1h': undefined } });
        if (asIf.tier === 'raw' && cover.rawOldestMs !== undefined && cover.rawOldestMs <= fromMs) return answerRaw(logOf(series), series, query, asIf.stepS);
      }
      const { tier, stepS } = chooseTier(fromMs, toMs, points, step, cover);
      if (tier === 'raw' || !rollups) return answerRaw(logOf(series), series, query, stepS);
      const sums = new BucketSums(stepS, query.fields);
      const width = (ROLLUP_TIERS.find((t) => t.tier === tier) as { width: number }).width;
      const take = (bucket: RollupBucket) => {
        if (bucket.b * 1000 + width * 1000 <= fromMs || bucket.b * 1000 >= toMs) return;
        if (query.node !== undefined && bucket.node !== query.node) return;
        if (query.mount !== undefined && bucket.mount !== query.mount) return;
        sums.addRollup(bucket);
      };
      for (const period of periodsBetween(tier, fromMs, toMs)) {
        for (const bucket of await reader.read(periodFile(dataDir, series, tier, period))) take(bucket);
      }
      if (rollups.tail) for (const bucket of (await foldTail(dataPath(dataDir, series), series, rollups.tail)).buckets(tier)) take(bucket);
      return answer(query, stepS, tier, sums);
    },
  };
}

function answer(query: RangeQuery, stepS: number, tier: Tier, sums: BucketSums): RangeAnswer {
  return { from: new Date(query.fromMs).toISOString(), to: new Date(query.toMs).toISOString(), step_s: stepS, tier, items: sums.items() };
}

async function answerRaw(log: RecordLog, series: RangeSeries, query: RangeQuery, stepS: number): Promise<RangeAnswer> {
  const sums = new BucketSums(stepS, query.fields);
  const facet = seriesFacet({ node: query.node, mount: series === 'disk' ? query.mount : undefined });
  await log.window(query.fromMs, query.toMs, facet && 'value' in facet ? facet : undefined, (batch) => {
    for (const { time, record } of batch) sums.addRecord(time, record);
  });
  return answer(query, stepS, 'raw', sums);
}

interface RollupCoverage {
  /** Whether the rollups follow the raw log as it is now (the same file, at most MAX_TAIL_BYTES behind). */
  current: boolean;
  /** The raw bytes `[from, to)` not yet folded in (current only). */
  tail: { from: number; to: number; identity: string } | undefined;
  oldestMs: Record<RollupTier, number | undefined>;
}

/** What the rollups of `series` hold, from their state and files; undefined when they were never built. */
async function rollupCoverage(dataDir: string, series: RangeSeries): Promise<RollupCoverage | undefined> {
  const state = await readRollupState(dataDir, series);
  if (!state) return undefined;
  const raw = await rawFile(dataPath(dataDir, series));
  const identity = raw?.identity ?? 'none';
  const size = raw?.size ?? 0;
  const current = identity === state.identity && size >= state.offset && size - state.offset <= MAX_TAIL_BYTES;
  const oldestMs = {} as Record<RollupTier, number | undefined>;
  for (const { tier } of ROLLUP_TIERS) {
    const first = (await storedPeriods(dataDir, series, tier))[0];
    oldestMs[tier] = first === undefined ? undefined : Math.max(periodSpan(tier, first).startMs, state.oldest_ms ?? Number.NEGATIVE_INFINITY);
  }
  return { current, tail: current && size > state.offset ? { from: state.offset, to: size, identity } : undefined, oldestMs };
}

async function rawFile(file: string): Promise<{ identity: string; size: number } | undefined> {
  try {
    const { handle, info } = await openDataFileInfo(file);
    await handle.close();
    return { identity: `${info.dev}:${info.ino}`, size: info.size };
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** The raw lines of `tail` folded into rollup buckets, in memory (when the file is still the one the rollups follow). */
async function foldTail(file: string, series: RangeSeries, tail: { from: number; to: number; identity: string }): Promise<RollupFold> {
  const fold = new RollupFold(series);
  const { handle, info } = await openDataFileInfo(file);
  try {
    if (`${info.dev}:${info.ino}` !== tail.identity) return fold;
    await forEachLine(handle, tail.from, Math.min(tail.to, info.size), (bytes) => {
      const record = bytes.length ? parseRecord(bytes.toString('utf8')) : undefined;
      if (record && acceptable(series, record)) fold.add(record);
    });
  } finally {
    await handle.close();
  }
  return fold;
}

/** The time of the first dated record among the raw log's first lines (the log is in about the order of time), undefined when there is none. */
async function rawOldest(file: string): Promise<number | undefined> {
  let opened;
  try {
    opened = await openDataFileInfo(file);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
  const { handle, info } = opened;
  try {
    let oldest: number | undefined;
    await forEachLine(handle, 0, Math.min(info.size, HEAD_BYTES), (bytes) => {
      if (oldest !== undefined || !bytes.length) return;
      const ms = rfc3339Ms(parseRecord(bytes.toString('utf8'))?.ts);
      if (!Number.isNaN(ms)) oldest = ms;
    });
    return oldest;
  } finally {
    await handle.close();
  }
}
