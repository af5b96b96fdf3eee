import type { JsonRecord } from '../jsonl/parse-record.ts';
import type { FieldSums, RangeItem, RollupBucket } from './range-types.ts';

/** A numeric field a range sums up: a finite JSON number (not a boolean, not a string). */
export function isMeasure(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/** Adds `value` to a field's sums (made when absent). */
export function addValue(fields: Record<string, FieldSums>, name: string, value: number): void {
  const sums = fields[name];
  if (!sums) fields[name] = [1, value, value, value];
  else {
    sums[0]++;
    sums[1] += value;
    if (value < sums[2]) sums[2] = value;
    if (value > sums[3]) sums[3] = value;
  }
}

/** Adds the sums `more` to a field's sums (made when absent): sums of sums are exact (min, max, count) or as a float sum is. */
export function addSums(fields: Record<string, FieldSums>, name: string, more: FieldSums): void {
  const sums = fields[name];
  if (!sums) fields[name] = [more[0], more[1], more[2], more[3]];
  else {
    sums[0] += more[0];
    sums[1] += more[1];
    if (more[2] < sums[2]) sums[2] = more[2];
    if (more[3] > sums[3]) sums[3] = more[3];
  }
}

interface Bucket {
  n: number;
  f: Record<string, FieldSums>;
}

/**
 * The buckets of an answer (DESIGN.md 7b), `stepS` seconds each on the
 * epoch-aligned grid: raw records (`addRecord`, their time given) or rollup
 * buckets (`addRollup`, each inside one bucket of the grid) go in, the
 * answer's items come out, oldest first, empty buckets left out.
 */
export class BucketSums {
  readonly #stepMs: number;
  readonly #fields: ReadonlySet<string> | undefined;
  readonly #buckets = new Map<number, Bucket>();

  constructor(stepS: number, fields?: readonly string[]) {
    this.#stepMs = stepS * 1000;
    this.#fields = fields ? new Set(fields) : undefined;
  }

  #bucket(ms: number): Bucket {
    const start = Math.floor(ms / this.#stepMs) * this.#stepMs;
    let bucket = this.#buckets.get(start);
    if (!bucket) this.#buckets.set(start, (bucket = { n: 0, f: {} }));
    return bucket;
  }

  /** One raw record taken at `ms`: every numeric field (of those asked for). */
  addRecord(ms: number, record: JsonRecord): void {
    const bucket = this.#bucket(ms);
    bucket.n++;
    const wanted = this.#fields;
    if (wanted) {
      for (const name of wanted) {
        const value = record[name];
        if (isMeasure(value)) addValue(bucket.f, name, value);
      }
      return;
    }
    for (const name in record) {
      const value = record[name];
      if (isMeasure(value)) addValue(bucket.f, name, value);
    }
  }

  /** One rollup bucket (its start in seconds). */
  addRollup(rollup: RollupBucket): void {
    const bucket = this.#bucket(rollup.b * 1000);
    bucket.n += rollup.n;
    const wanted = this.#fields;
    for (const name in rollup.f) {
      if (!wanted || wanted.has(name)) addSums(bucket.f, name, rollup.f[name] as FieldSums);
    }
  }

  items(): RangeItem[] {
    return [...this.#buckets.entries()]
      .filter(([, b]) => b.n > 0)
      .sort(([a], [b]) => a - b)
      .map(([start, b]) => {
        const item: RangeItem = { ts: new Date(start).toISOString(), count: b.n, min: {}, mean: {}, max: {} };
        for (const name of Object.keys(b.f).sort()) {
          const [count, sum, min, max] = b.f[name] as FieldSums;
          item.min[name] = min;
          item.mean[name] = sum / count;
          item.max[name] = max;
        }
        return item;
      });
  }
}
