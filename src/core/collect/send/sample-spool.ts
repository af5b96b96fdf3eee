import { randomBytes } from 'node:crypto';
import { type FileHandle, open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { dataPath } from '../../data-files.ts';
import { withFileLock } from '../../file-lock.ts';
import { isNotFound } from '../../fs-errors.ts';
import { type AppendedSpan, appendRecordsTo, ensureFolder, openForAppend, syncDirectory } from '../../jsonl/append-record.ts';
import { openDataFile } from '../../open-data-file.ts';
import type { SeriesSample } from '../../store/store.ts';
import { readSpoolState, type SpoolState, writeSpoolState } from './spool-state.ts';

const NEWLINE = 0x0a;
const CHUNK_BYTES = 64 * 1024;
/** The most acknowledged (or dropped) bytes kept at the head of a spool before a compaction rewrites it without them. */
const COMPACT_BYTES = 1024 * 1024;
/** The first line of a spool names its generation; a longer first line is not a header. */
const MAX_HEADER_BYTES = 512;

/** A stretch of the spool, oldest first: the samples in it, and lines that were not samples (sent nowhere, cut with the rest). */
export interface SpoolBatch {
  generation: string;
  start: number;
  end: number;
  samples: SeriesSample[];
  unreadable: number;
  /** Where the spool's header line ends: `end - headerEnd` is its acknowledged head once the batch is. */
  headerEnd: number;
  /** The batch reached the end of the spool as it was read: nothing was left after it then. */
  atEnd: boolean;
}

interface Header {
  /** '' when the file has no header (missing, empty, or a first line that is not one). */
  generation: string;
  /** Where the header line ends (0 without one). */
  end: number;
  size: number;
}

/**
 * The collector's spool of samples for a hub (DESIGN.md 7a), in its data dir:
 * `collect/spool-<node>.jsonl`, a header line `{"spool": GENERATION}` then
 * one sample per line, appended durably under `<file>.lock`; and
 * `collect/spool-<node>.state.json` (spool-state.ts), where the sender
 * stands. Contract:
 *
 * - `append` is durable when it resolves (appendRecords: one write, fsync).
 *   Past `maxBytes` of unsent samples, the oldest are dropped (the offset
 *   moves past them) and counted; the count is handed to the next append's
 *   `build` (for its pulse) and then forgotten.
 * - Samples leave the spool only by `acknowledge` (after the hub's 2xx),
 *   which moves the offset past a batch: one atomic state write. A torn last
 *   line (a crash mid-append) is never read as a sample.
 * - `compact` rewrites the spool without its acknowledged head (temp file,
 *   rename, then the state) once that head passes min(1 MiB, maxBytes / 4).
 *   `readBatch`, `acknowledge` and `compact` are the sender's: callers hold
 *   `withSendLock`, so the offsets of a batch stay those of the file.
 */
export class SampleSpool {
  readonly file: string;
  readonly stateFile: string;
  /** The spool's folder was made (or found) once: a folder removed later is made again by the append's open. */
  private folderMade = false;

  constructor(
    dataDir: string,
    node: string,
    readonly maxBytes: number,
  ) {
    const base = path.join(dataPath(dataDir, 'collectState'), `spool-${encodeURIComponent(node)}`);
    this.file = `${base}.jsonl`;
    this.stateFile = `${base}.state.json`;
  }

  /** Runs `fn` as the spool's one sender (`<file>.send.lock`); gives up with `unavailable` after `timeoutMs`. */
  withSendLock<T>(fn: () => Promise<T>, timeoutMs: number): Promise<T> {
    return withFileLock(`${this.file}.send.lock`, fn, { timeoutMs });
  }

  /**
   * Appends the sample `build` makes, given how many samples were dropped
   * since the last append said so; then keeps the unsent samples within
   * `maxBytes` (never dropping this one). Answers how many were dropped now.
   */
  async append(build: (unreportedDrops: number) => SeriesSample): Promise<{ dropped: number }> {
    if (!this.folderMade) await ensureFolder(this.file);
    this.folderMade = true;
    return this.locked(async () => {
      const state = await readSpoolState(this.stateFile);
      // One open for the header and the append (and the folder made again if it went: openForAppend).
      const handle = await openForAppend(this.file);
      let head: Header;
      let span: AppendedSpan;
      let sample: SeriesSample;
      let records: object[];
      try {
        head = await headerOf(handle);
        sample = build(state.dropped);
        records = head.size === 0 ? [{ spool: newGeneration() }, sample] : [sample];
        span = await appendRecordsTo(handle, this.file, records as unknown as Record<string, unknown>[], head.size);
      } finally {
        await handle.close();
      }
      const generation = head.size === 0 ? (records[0] as { spool: string }).spool : head.generation;
      const headerEnd = head.size === 0 ? lineBytes(records[0] as object) : head.end;
      const start = startOf(state, generation, headerEnd);
      let offset = start;
      let dropped = 0;
      if (span.end - start > this.maxBytes) {
        [offset, dropped] = await skipLines(this.file, start, span.end - this.maxBytes, span.end - lineBytes(sample));
      }
      if (dropped > 0 || state.dropped > 0 || offset !== state.offset || generation !== state.generation) {
        await writeSpoolState(this.stateFile, { generation, offset, dropped });
      }
      return { dropped };
    }).catch((err: unknown) => {
      // The folder may have gone (its lock file could not be made): made again next time.
      this.folderMade = false;
      throw err;
    });
  }

  /** The oldest unsent samples: at most `maxSamples`, in at most `maxBytes` (at least one line, whatever its size). */
  async readBatch(maxSamples: number, maxBytes: number): Promise<SpoolBatch> {
    const state = await readSpoolState(this.stateFile);
    const handle = await openIfThere(this.file);
    if (!handle) return { generation: '', start: 0, end: 0, samples: [], unreadable: 0, headerEnd: 0, atEnd: true };
    try {
      const head = await headerOf(handle);
      const start = Math.min(startOf(state, head.generation, head.end), head.size);
      const batch: SpoolBatch = { generation: head.generation, start, end: start, samples: [], unreadable: 0, headerEnd: head.end, atEnd: false };
      const buffer = Buffer.alloc(Math.min(maxBytes, head.size - start));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, start);
      let at = 0;
      while (batch.samples.length + batch.unreadable < maxSamples) {
        const nl = buffer.indexOf(NEWLINE, at);
        if (nl < 0 || nl >= bytesRead) break;
        const sample = parseSample(buffer.subarray(at, nl).toString('utf8'));
        if (sample) batch.samples.push(sample);
        else batch.unreadable++;
        at = nl + 1;
      }
      batch.end = start + at;
      if (at === 0 && bytesRead === maxBytes) {
        // One line longer than a whole batch: no hub takes it; it is cut as unreadable.
        const [end] = await skipLines(this.file, start, start + 1, head.size);
        if (end > start) Object.assign(batch, { end, unreadable: 1 });
      }
      batch.atEnd = batch.end >= head.size;
      return batch;
    } finally {
      await handle.close();
    }
  }

  /** Moves the offset past `batch` (the hub took it): its samples leave the spool. */
  async acknowledge(batch: SpoolBatch): Promise<void> {
    await this.locked(async () => {
      const state = await readSpoolState(this.stateFile);
      // Under the lock a state of the batch's generation is the file's (a compaction renames and writes the state under it): no need to read the header.
      if (state.generation !== batch.generation && (await readHeader(this.file)).generation !== batch.generation) return;
      if (batch.end <= startOf(state, batch.generation, batch.headerEnd)) return;
      await writeSpoolState(this.stateFile, { generation: batch.generation, offset: batch.end, dropped: state.dropped });
    });
  }

  /**
   * Rewrites the spool without its acknowledged head once that head is large
   * enough (see the class); answers whether it did. Given the last batch the
   * sender read (acknowledged or not), a head smaller than that is left
   * without taking the lock: the head only grows by this sender's
   * acknowledgements and an append's drops, and a compaction skipped only
   * leaves the file larger until the next one.
   */
  async compact(last?: SpoolBatch): Promise<boolean> {
    if (last && last.end - last.headerEnd < this.compactBytes()) return false;
    return this.locked(async () => {
      const state = await readSpoolState(this.stateFile);
      const handle = await openIfThere(this.file);
      if (!handle) return false;
      let temp: string | undefined;
      try {
        const head = await headerOf(handle);
        const start = Math.min(startOf(state, head.generation, head.end), head.size);
        if (start - head.end < this.compactBytes()) return false;
        const generation = newGeneration();
        const header = Buffer.from(`${JSON.stringify({ spool: generation })}\n`);
        temp = path.join(path.dirname(this.file), `.${path.basename(this.file)}.${randomBytes(4).toString('hex')}.tmp`);
        const out = await open(temp, 'wx', 0o600);
        try {
          await out.write(header);
          await copyRange(handle, out, start, head.size);
          await out.sync();
        } finally {
          await out.close();
        }
        await rename(temp, this.file);
        temp = undefined;
        await syncDirectory(path.dirname(this.file));
        await writeSpoolState(this.stateFile, { generation, offset: header.length, dropped: state.dropped });
        return true;
      } finally {
        await handle.close();
        if (temp) await unlink(temp).catch(() => {});
      }
    });
  }

  /** The bytes of samples not yet acknowledged nor dropped. */
  async pendingBytes(): Promise<number> {
    const state = await readSpoolState(this.stateFile);
    const head = await readHeader(this.file);
    return Math.max(0, head.size - startOf(state, head.generation, head.end));
  }

  private compactBytes(): number {
    return Math.min(COMPACT_BYTES, Math.floor(this.maxBytes / 4));
  }

  private locked<T>(fn: () => Promise<T>): Promise<T> {
    return withFileLock(`${this.file}.lock`, fn);
  }
}

function newGeneration(): string {
  return randomBytes(8).toString('hex');
}

function lineBytes(record: object): number {
  return Buffer.byteLength(`${JSON.stringify(record)}\n`);
}

/** Where the unsent samples start: the state's offset when it is of this generation, else right after the header. */
function startOf(state: SpoolState, generation: string, headerEnd: number): number {
  return state.generation === generation ? Math.max(state.offset, headerEnd) : headerEnd;
}

async function openIfThere(file: string): Promise<FileHandle | undefined> {
  try {
    return await openDataFile(file);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

async function readHeader(file: string): Promise<Header> {
  const handle = await openIfThere(file);
  if (!handle) return { generation: '', end: 0, size: 0 };
  try {
    return await headerOf(handle);
  } finally {
    await handle.close();
  }
}

async function headerOf(handle: FileHandle): Promise<Header> {
  const size = (await handle.stat()).size;
  const buffer = Buffer.alloc(Math.min(MAX_HEADER_BYTES, size));
  const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
  const nl = buffer.subarray(0, bytesRead).indexOf(NEWLINE);
  if (nl < 0) return { generation: '', end: 0, size };
  let generation: unknown;
  try {
    generation = (JSON.parse(buffer.subarray(0, nl).toString('utf8')) as { spool?: unknown } | null)?.spool;
  } catch {
    generation = undefined;
  }
  return typeof generation === 'string' && generation !== '' ? { generation, end: nl + 1, size } : { generation: '', end: 0, size };
}

/**
 * Skips whole lines from `start` until at least `until` (or up to `limit`,
 * never past it): answers where it stopped (a line start) and how many lines
 * it skipped.
 */
async function skipLines(file: string, start: number, until: number, limit: number): Promise<[number, number]> {
  const handle = await openDataFile(file);
  try {
    const buffer = Buffer.alloc(CHUNK_BYTES);
    let lineStart = start;
    let lines = 0;
    let at = start;
    while (lineStart < until && at < limit) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(CHUNK_BYTES, limit - at), at);
      if (bytesRead === 0) break;
      let from = 0;
      for (let nl = buffer.indexOf(NEWLINE, from); nl >= 0 && nl < bytesRead; nl = buffer.indexOf(NEWLINE, from)) {
        lineStart = at + nl + 1;
        lines++;
        from = nl + 1;
        if (lineStart >= until) break;
      }
      at += bytesRead;
    }
    return [lineStart, lines];
  } finally {
    await handle.close();
  }
}

function parseSample(line: string): SeriesSample | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  const v = value as Partial<SeriesSample> | null;
  const isObject = (o: unknown): o is Record<string, unknown> => typeof o === 'object' && o !== null && !Array.isArray(o);
  if (!isObject(v) || !isObject(v.trend) || !isObject(v.pulse) || !Array.isArray(v.disks)) return undefined;
  if (typeof v.trend.ts !== 'string' || typeof v.trend.node !== 'string') return undefined;
  return v as SeriesSample;
}

async function copyRange(from: FileHandle, to: FileHandle, start: number, end: number): Promise<void> {
  const buffer = Buffer.alloc(CHUNK_BYTES);
  for (let at = start; at < end; ) {
    const { bytesRead } = await from.read(buffer, 0, Math.min(CHUNK_BYTES, end - at), at);
    if (bytesRead === 0) break;
    await to.write(buffer, 0, bytesRead);
    at += bytesRead;
  }
}
