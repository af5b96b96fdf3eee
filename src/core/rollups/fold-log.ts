import type { FileHandle } from 'node:fs/promises';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { isNotFound } from '../fs-errors.ts';
import { parseRecord, type JsonRecord } from '../jsonl/parse-record.ts';
import { openDataFileInfo } from '../open-data-file.ts';
import { rfc3339Ms } from './range-time.ts';
import { ROLLUP_TIERS, type RangeSeries, type RollupBucket } from './range-types.ts';
import { planBuckets, rollupFolder, writeBuckets } from './rollup-files.ts';
import { RollupFold } from './rollup-fold.ts';
import { journalled, lineSha1, type RollupState, writeRollupState } from './rollup-state.ts';

const CHUNK = 4 * 1024 * 1024;
const NEWLINE = 0x0a;
/** Bytes of raw log folded between two writes of rollup lines (and of the state): memory stays bounded on a first build. */
const FLUSH_BYTES = 64 * 1024 * 1024;
/**
 * The longest stretch a fold keeps the thread before it lets the requests
 * waiting behind it go (a look at the clock every YIELD_LINES lines): a
 * hub's pass folds a quarter of a second of samples, 20-60 ms of work that
 * held every batch answer up as one block.
 */
const SLICE_MS = 4;
const YIELD_LINES = 128;

/**
 * Calls `line` with each complete line of `handle` in `[from, end)` (its
 * bytes, without the newline, and the offset just past it); answers where
 * the complete lines stop.
 */
export async function forEachLine(handle: FileHandle, from: number, end: number, line: (bytes: Buffer, after: number) => Promise<void> | void): Promise<number> {
  let buf = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(1, end - from)));
  let carried = 0;
  let position = from;
  let done = from;
  let sliceStart = performance.now();
  while (position < end) {
    if (carried === buf.length) {
      const bigger = Buffer.allocUnsafe(buf.length * 2);
      buf.copy(bigger, 0, 0, carried);
      buf = bigger;
    }
    const { bytesRead } = await handle.read(buf, carried, Math.min(buf.length - carried, end - position), position);
    if (bytesRead === 0) break;
    const bufStart = position - carried;
    position += bytesRead;
    const data = buf.subarray(0, carried + bytesRead);
    let start = 0;
    let count = 0;
    for (let nl = data.indexOf(NEWLINE, carried); nl !== -1; nl = data.indexOf(NEWLINE, start)) {
      const pending = line(data.subarray(start, nl), bufStart + nl + 1);
      if (pending) await pending;
      start = nl + 1;
      done = bufStart + start;
      if (++count % YIELD_LINES === 0 && performance.now() - sliceStart > SLICE_MS) {
        await new Promise((r) => setImmediate(r));
        sliceStart = performance.now();
      }
    }
    carried = data.copy(buf, 0, start);
  }
  return done;
}

/** The offset just past the line equal to `last` (length and SHA-1) in `[0, end)`, the last such; undefined when there is none. */
async function findLine(handle: FileHandle, end: number, last: { length: number; sha1: string }): Promise<number | undefined> {
  let found: number | undefined;
  await forEachLine(handle, 0, end, (bytes, after) => {
    if (bytes.length === last.length && lineSha1(bytes) === last.sha1) found = after;
  });
  return found;
}

export interface FoldOutcome {
  state: RollupState;
  /** Raw records folded in now. */
  folded: number;
}

/**
 * Folds what the raw log `file` holds past `state` into the rollup files
 * (the caller holds the rollups' lock). From `state.offset` when the file is
 * the one folded (same identity, a line ends there and it is the line
 * folded last); in a file a prune rewrote, from just past that line found
 * again; when it is nowhere (another file altogether), the records dated
 * after the newest one folded. Without a state, the whole file. Every
 * FLUSH_BYTES and at the end, the lines go to their period files and the
 * state moves on, journalled (rollup-state.ts): a crash folds nothing twice.
 */
export async function foldLog(dataDir: string, series: RangeSeries, file: string, state: RollupState | undefined, options: { into?: string } = {}): Promise<FoldOutcome> {
  let opened;
  try {
    opened = await openDataFileInfo(file);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    return { state: state ?? emptyState('none'), folded: 0 };
  }
  const { handle, info } = opened;
  try {
    const identity = `${info.dev}:${info.ino}`;
    let from = 0;
    let after = Number.NEGATIVE_INFINITY;
    if (state) {
      const same = state.identity === identity && state.offset <= info.size && (await lineBefore(handle, state.offset, state.last));
      if (same) from = state.offset;
      else {
        const found = state.last ? await findLine(handle, info.size, state.last) : undefined;
        if (found !== undefined) from = found;
        else after = state.newest_ms ?? Number.NEGATIVE_INFINITY;
      }
    }
    let current: RollupState = { ...(state ?? emptyState(identity)), identity, offset: from };
    let fold = new RollupFold(series);
    let last = current.last;
    /** The last line read: where it ends and its length (hashed at the next flush, read back: hashing every line costs more). */
    let lastSpan: { end: number; length: number } | undefined;
    let folded = 0;
    let sinceFlush = 0;
    const flush = async (offset: number) => {
      if (lastSpan) last = await spanSha1(handle, lastSpan);
      lastSpan = undefined;
      const next: RollupState = {
        ...current,
        offset,
        last,
        oldest_ms: minOf(current.oldest_ms, fold.oldestMs),
        newest_ms: maxOf(current.newest_ms, fold.newestMs),
      };
      if (options.into !== undefined) {
        if (fold.size > 0) await writeBuckets(targetsOf(dataDir, series, fold, options.into));
      } else if (fold.size > 0) await writeFold(dataDir, series, fold, () => writeRollupState(dataDir, series, next));
      else if (state === undefined || next.offset !== state.offset || next.identity !== state.identity) await writeRollupState(dataDir, series, next);
      current = next;
      fold = new RollupFold(series);
      sinceFlush = 0;
    };
    await forEachLine(handle, from, info.size, async (bytes, end) => {
      sinceFlush += bytes.length + 1;
      const record = bytes.length ? parseRecord(bytes.toString('utf8')) : undefined;
      if (record && acceptable(series, record) && !(rfc3339Ms(record.ts) <= after) && fold.add(record)) folded++;
      lastSpan = { end, length: bytes.length };
      if (sinceFlush >= FLUSH_BYTES) await flush(end);
      else current = { ...current, offset: end };
    });
    await flush(current.offset);
    return { state: current, folded };
  } finally {
    await handle.close();
  }
}

/** The buckets of `fold` by the period file they go to: the live one, or its place under `into` (a rebuild's). */
function targetsOf(dataDir: string, series: RangeSeries, fold: RollupFold, into?: string): Map<string, RollupBucket[]> {
  const folder = rollupFolder(dataDir, series);
  const plan = new Map<string, RollupBucket[]>();
  for (const { tier } of ROLLUP_TIERS) planBuckets(dataDir, series, tier, fold.buckets(tier), plan);
  return into === undefined ? plan : new Map([...plan].map(([target, list]) => [path.join(into, path.relative(folder, target)), list]));
}

/** The buckets of `fold` appended to their period files, then `commit` (the state), journalled. */
async function writeFold(dataDir: string, series: RangeSeries, fold: RollupFold, commit: () => Promise<void>): Promise<void> {
  const folder = rollupFolder(dataDir, series);
  const targets = targetsOf(dataDir, series, fold);
  const sizes: Record<string, number> = {};
  for (const target of targets.keys()) sizes[path.relative(folder, target)] = await sizeOf(target);
  await journalled(dataDir, series, sizes, () => writeBuckets(targets), commit);
}

/** A disk snapshot whose typed fields are of their types, any trend point: what the range routes read (series-records.ts). */
export function acceptable(series: RangeSeries, record: JsonRecord): boolean {
  if (series !== 'disk') return true;
  return ['total_bytes', 'used_bytes', 'free_bytes'].every((f) => record[f] === undefined || (typeof record[f] === 'number' && Number.isFinite(record[f])));
}

async function sizeOf(file: string): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch (err) {
    if (isNotFound(err)) return 0;
    throw err;
  }
}

async function spanSha1(handle: FileHandle, span: { end: number; length: number }): Promise<{ length: number; sha1: string }> {
  const buf = Buffer.alloc(span.length);
  await handle.read(buf, 0, span.length, span.end - 1 - span.length);
  return { length: span.length, sha1: lineSha1(buf) };
}

/** Whether a line ends at `offset` and is `last` (or nothing was folded: offset 0). */
async function lineBefore(handle: FileHandle, offset: number, last: RollupState['last']): Promise<boolean> {
  if (offset === 0) return true;
  if (!last || last.length + 1 > offset) return false;
  const buf = Buffer.alloc(last.length + 1);
  const { bytesRead } = await handle.read(buf, 0, buf.length, offset - buf.length);
  if (bytesRead !== buf.length || buf[buf.length - 1] !== NEWLINE) return false;
  return lineSha1(buf.subarray(0, last.length)) === last.sha1;
}

export function emptyState(identity: string): RollupState {
  return { version: 1, identity, offset: 0, last: null, oldest_ms: null, newest_ms: null, pruned_at: null };
}

function minOf(a: number | null, b: number | undefined): number | null {
  if (b === undefined) return a;
  return a === null ? b : Math.min(a, b);
}

function maxOf(a: number | null, b: number | undefined): number | null {
  if (b === undefined) return a;
  return a === null ? b : Math.max(a, b);
}
