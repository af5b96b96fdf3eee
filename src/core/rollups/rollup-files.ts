import { readdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { dataPath } from '../data-files.ts';
import { isNotFound } from '../fs-errors.ts';
import { appendRecords } from '../jsonl/append-record.ts';
import type { JsonRecord } from '../jsonl/parse-record.ts';
import { openDataFileInfo } from '../open-data-file.ts';
import type { RangeSeries, RollupBucket, RollupTier } from './range-types.ts';

// The data dir's rollups (docs/data-dir.md, "Rollups"): per series and tier,
// one JSONL file per period (a UTC day of 1-minute buckets, a UTC month of
// 1-hour buckets) under rollups/<series>/<tier>/, each line a part of one
// bucket of one group: `{"b", "node"?, "mount"?, "n", "f": {FIELD: [count,
// sum, min, max]}}`. A bucket is the sum of its lines: appends never rewrite,
// late records add a line, and a retention drops whole files.

/** `rollups/<series>` in `dataDir`. */
export function rollupFolder(dataDir: string, series: RangeSeries): string {
  return path.join(dataPath(dataDir, 'rollups'), series);
}

/** The period (file name without `.jsonl`) that holds bucket `b` (seconds) of `tier`: `2026-11-21` (1m), `2026-11` (1h). */
export function periodOf(tier: RollupTier, b: number): string {
  const day = new Date(b * 1000).toISOString().slice(0, 10);
  return tier === '1m' ? day : day.slice(0, 7);
}

/** The start and end (ms) of a period. */
export function periodSpan(tier: RollupTier, period: string): { startMs: number; endMs: number } {
  if (tier === '1m') {
    const startMs = Date.parse(`${period}T00:00:00Z`);
    return { startMs, endMs: startMs + 86_400_000 };
  }
  const [y, m] = period.split('-').map(Number) as [number, number];
  return { startMs: Date.UTC(y, m - 1, 1), endMs: Date.UTC(y, m, 1) };
}

/** The periods of `tier` that meet `[fromMs, toMs)`, oldest first. */
export function periodsBetween(tier: RollupTier, fromMs: number, toMs: number): string[] {
  const periods: string[] = [];
  for (let ms = fromMs; ms < toMs; ) {
    const period = periodOf(tier, Math.floor(ms / 1000));
    periods.push(period);
    ms = periodSpan(tier, period).endMs;
  }
  return periods;
}

export function periodFile(dataDir: string, series: RangeSeries, tier: RollupTier, period: string): string {
  return path.join(rollupFolder(dataDir, series), tier, `${period}.jsonl`);
}

/** The periods of `tier` with a file, oldest first. */
export async function storedPeriods(dataDir: string, series: RangeSeries, tier: RollupTier): Promise<string[]> {
  try {
    const names = await readdir(path.join(rollupFolder(dataDir, series), tier));
    return names.filter((n) => /^\d{4}-\d{2}(-\d{2})?\.jsonl$/.test(n)).map((n) => n.slice(0, -6)).sort();
  } catch (err) {
    if (isNotFound(err)) return [];
    throw err;
  }
}

/** `buckets` of `tier` by the period file they go to. */
export function planBuckets(dataDir: string, series: RangeSeries, tier: RollupTier, buckets: readonly RollupBucket[], byFile = new Map<string, RollupBucket[]>()): Map<string, RollupBucket[]> {
  for (const bucket of buckets) {
    const file = periodFile(dataDir, series, tier, periodOf(tier, bucket.b));
    let list = byFile.get(file);
    if (!list) byFile.set(file, (list = []));
    list.push(bucket);
  }
  return byFile;
}

/** Appends the planned buckets (planBuckets) to their files, one durable write per file. */
export async function writeBuckets(plan: ReadonlyMap<string, readonly RollupBucket[]>): Promise<void> {
  for (const [file, list] of plan) await appendRecords(file, list as unknown as JsonRecord[]);
}

/** Removes a period file (a retention); a missing one is fine. */
export async function removePeriod(file: string): Promise<void> {
  await unlink(file).catch((err: unknown) => {
    if (!isNotFound(err)) throw err;
  });
}

/** Whether `value` is a rollup line. */
function isBucket(value: unknown): value is RollupBucket {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.b === 'number' && typeof v.n === 'number' && typeof v.f === 'object' && v.f !== null;
}

interface CachedFile {
  identity: string;
  /** Bytes parsed: up to the end of the last complete line. */
  parsed: number;
  mtimeMs: number;
  size: number;
  buckets: RollupBucket[];
}

/** Files' parsed buckets kept, at most this many bytes of them (by the files' sizes). */
const MAX_CACHED_BYTES = 96 * 1024 * 1024;

/**
 * Reads rollup period files, keeping what it parsed: a file read again is
 * parsed only for the lines appended since (the same file, grown), so the
 * current period costs its new lines. Lines that are not rollup buckets are
 * passed over.
 */
export class RollupReader {
  readonly #cache = new Map<string, CachedFile>();
  #bytes = 0;

  /** The buckets of `file` (none when it does not exist). */
  async read(file: string): Promise<readonly RollupBucket[]> {
    let opened;
    try {
      opened = await openDataFileInfo(file);
    } catch (err) {
      if (isNotFound(err)) {
        this.#drop(file);
        return [];
      }
      throw err;
    }
    const { handle, info } = opened;
    try {
      const identity = `${info.dev}:${info.ino}`;
      let cached = this.#cache.get(file);
      if (cached && (cached.identity !== identity || info.size < cached.parsed)) {
        this.#drop(file);
        cached = undefined;
      }
      if (cached && cached.size === info.size && cached.mtimeMs === info.mtimeMs) return cached.buckets;
      const from = cached?.parsed ?? 0;
      const buf = Buffer.allocUnsafe(info.size - from);
      let filled = 0;
      while (filled < buf.length) {
        const { bytesRead } = await handle.read(buf, filled, buf.length - filled, from + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      const end = buf.lastIndexOf(0x0a, filled - 1) + 1;
      const buckets = cached?.buckets ?? [];
      if (end > 0) {
        for (const line of buf.toString('utf8', 0, end).split('\n')) {
          if (!line) continue;
          try {
            const value: unknown = JSON.parse(line);
            if (isBucket(value)) buckets.push(value);
          } catch {
            // A torn or foreign line: not a bucket.
          }
        }
      }
      this.#drop(file);
      this.#cache.set(file, { identity, parsed: from + end, mtimeMs: info.mtimeMs, size: info.size, buckets });
      this.#bytes += info.size;
      // The oldest read first out, never the file just read.
      for (const name of this.#cache.keys()) {
        if (this.#bytes <= MAX_CACHED_BYTES) break;
        if (name !== file) this.#drop(name);
      }
      return buckets;
    } finally {
      await handle.close();
    }
  }

  #drop(file: string): void {
    const cached = this.#cache.get(file);
    if (!cached) return;
    this.#bytes -= cached.size;
    this.#cache.delete(file);
  }
}
