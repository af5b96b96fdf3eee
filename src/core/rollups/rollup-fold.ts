import type { JsonRecord } from '../jsonl/parse-record.ts';
import { addSums, addValue, isMeasure } from './bucket-sums.ts';
import { rfc3339Ms } from './range-time.ts';
import { ROLLUP_TIERS, type RangeSeries, type RollupBucket, type RollupTier } from './range-types.ts';

/** The group a record is rolled up in: its node (trends), its node and mount (disk); a record without them is in the group without. */
export function groupOf(series: RangeSeries, record: JsonRecord): { node?: string; mount?: string } {
  const group: { node?: string; mount?: string } = {};
  if (typeof record.node === 'string') group.node = record.node;
  if (series === 'disk' && typeof record.mount === 'string') group.mount = record.mount;
  return group;
}

/** One text per group and bucket, no two alike (the node's length before it, so no node and mount run together; the mount, last, needs none). */
function bucketKey(b: number, node: string | undefined, mount: string | undefined): string {
  return `${b} ${node === undefined ? '-' : `${node.length}:${node}`} ${mount === undefined ? '-' : `:${mount}`}`;
}

/**
 * Rollup buckets being summed up, per tier: raw records (`add`) or other
 * buckets (`merge`: sums of sums) go in, one bucket per group and start
 * comes out (`buckets`). A record whose `ts` is not an RFC 3339 date-time
 * is in no bucket.
 */
export class RollupFold {
  readonly #series: RangeSeries;
  readonly #tiers = new Map<RollupTier, Map<string, RollupBucket>>(ROLLUP_TIERS.map(({ tier }) => [tier, new Map()]));
  /** Raw records summed up (dated ones). */
  records = 0;
  /** The earliest dated record's time (ms). */
  oldestMs: number | undefined;
  /** The latest dated record's time (ms). */
  newestMs: number | undefined;

  constructor(series: RangeSeries) {
    this.#series = series;
  }

  get size(): number {
    let n = 0;
    for (const buckets of this.#tiers.values()) n += buckets.size;
    return n;
  }

  /** Adds a raw record; false when it cannot be dated. */
  add(record: JsonRecord): boolean {
    const ms = rfc3339Ms(record.ts);
    if (Number.isNaN(ms)) return false;
    this.records++;
    if (this.oldestMs === undefined || ms < this.oldestMs) this.oldestMs = ms;
    if (this.newestMs === undefined || ms > this.newestMs) this.newestMs = ms;
    const { node, mount } = groupOf(this.#series, record);
    for (const { tier, width } of ROLLUP_TIERS) {
      const b = Math.floor(ms / 1000 / width) * width;
      const bucket = this.#bucket(tier, b, node, mount);
      bucket.n++;
      for (const name in record) {
        const value = record[name];
        if (isMeasure(value)) addValue(bucket.f, name, value);
      }
    }
    return true;
  }

  /** Adds a rollup bucket of `tier` (another part of the same group and start, say). */
  merge(tier: RollupTier, more: RollupBucket): void {
    const bucket = this.#bucket(tier, more.b, more.node, more.mount);
    bucket.n += more.n;
    for (const name in more.f) addSums(bucket.f, name, more.f[name] as [number, number, number, number]);
  }

  #bucket(tier: RollupTier, b: number, node: string | undefined, mount: string | undefined): RollupBucket {
    const buckets = this.#tiers.get(tier) as Map<string, RollupBucket>;
    const key = bucketKey(b, node, mount);
    let bucket = buckets.get(key);
    if (!bucket) {
      bucket = { b, ...(node === undefined ? {} : { node }), ...(mount === undefined ? {} : { mount }), n: 0, f: {} };
      buckets.set(key, bucket);
    }
    return bucket;
  }

  /** The buckets of `tier`, oldest first. */
  buckets(tier: RollupTier): RollupBucket[] {
    return [...(this.#tiers.get(tier) as Map<string, RollupBucket>).values()].sort((a, b) => a.b - b.b);
  }
}
