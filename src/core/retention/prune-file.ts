import { randomBytes } from 'node:crypto';
import { fstatSync, lstatSync, readSync, renameSync, writeSync } from 'node:fs';
import { type FileHandle, open, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { EstateError } from '../../errors.ts';
import { type HeldLock, isLockTimeout, withFileLock } from '../file-lock.ts';
import { isNotFound } from '../fs-errors.ts';
import { assertInsideDataDir, openDataFile } from '../open-data-file.ts';
import { readLinesForward } from './read-lines-forward.ts';
import { recordTime } from './record-time.ts';

const COPY_BYTES = 64 * 1024;
/** How long after the rename the old file is looked at again for a late line (see pruneFile). */
const LATE_WRITE_MS = 250;
/** Rewrites for late lines (see pruneFile) before the last ones are simply appended. */
const MAX_ROUNDS = 8;
/** Looks for bytes appended meanwhile before a rename goes ahead (the rest are late lines: see pruneFile and chaseSync). */
const MAX_LOOKS = 64;
/** Prunes begun again when the log was replaced (by another prune) while its copy was made. */
const MAX_ATTEMPTS = 3;

export interface PruneCounts {
  /** Lines read that were kept, the undated ones included. */
  kept: number;
  /** Lines dated before the cutoff: removed (or, with `dryRun`, that would be). */
  dropped: number;
  /** Lines kept because they cannot be dated (not JSON, no `ts`, not a date). */
  undated: number;
  /** The size of the log when the prune began, and after it (with what was appended meanwhile). */
  bytesBefore: number;
  bytesAfter: number;
}

export interface PruneOptions {
  /** Count what would be dropped; change nothing and take no lock. */
  dryRun?: boolean;
  /** How long to wait for the log's writer lock, each time it is taken (file-lock.ts; default 10 s). */
  lockTimeoutMs?: number;
  /** Called after each rename, outside the lock, before the old file is looked at for late lines (for tests). */
  renamed?: (round: number) => Promise<void>;
}

/** The lock an estate writer of `file` takes: `<file>.lock` (file-lock.ts; docs/data-dir.md "Locks"). */
export function logLockFile(file: string): string {
  return `${file}.lock`;
}

/**
 * Removes the lines of the JSONL log `file` dated before `cutoff` (their
 * `ts`), keeping every other line, in order. Contract:
 *
 * - The file is read one chunk at a time, never whole; kept lines go to a
 *   temp file beside it, which is synced and renamed over the log, then the
 *   folder is synced: a reader sees the old file or the new one, never a
 *   part of one.
 * - The long work (reading the log, writing the temp file, syncing it) is
 *   done without the log's writer lock (`logLockFile`); the lock is held
 *   only to copy what was appended meanwhile and rename, so an estate writer
 *   waits for the bytes appended during the copy, not for the copy. A log
 *   replaced meanwhile (another prune) is pruned again from its start, at
 *   most MAX_ATTEMPTS times.
 * - Lines that cannot be dated are kept, and so is a last line with no
 *   newline (torn, or being written), byte for byte.
 * - Bytes appended by writers that take no lock (O_APPEND) are copied too,
 *   until the file stops growing, right before the rename. Lines such a
 *   writer appends to the old file in the instant of the rename (it opened
 *   the file just before), seen LATE_WRITE_MS after the rename (waited for
 *   without the lock), are put where the rename was, before what was
 *   appended to the new file since, by one more rewrite (and so on, at most
 *   MAX_ROUNDS times; then they are appended, as they are when a later
 *   round cannot have the lock in time: after the first rename a prune never
 *   fails its late lines, it appends them). A writer that keeps the file
 *   open across a prune, or pauses longer, writes on into the old, unlinked
 *   file: writers should take the lock, or open the log for each append.
 * - When nothing is dated before the cutoff, the file is left as it is, and
 *   no lock is taken.
 * - A missing log is nothing to prune (zero counts).
 */
export async function pruneFile(file: string, cutoff: Date, options: PruneOptions = {}): Promise<PruneCounts> {
  await assertInsideDataDir(file);
  if (options.dryRun) return withOpenLog(file, async (handle, size) => (await scan(handle, size, cutoff)).counts);
  for (let attempt = 1; ; attempt++) {
    const counts = await pruneOnce(file, cutoff, options);
    if (counts) return counts;
    if (attempt >= MAX_ATTEMPTS) {
      throw new EstateError('unavailable', `the log ${path.basename(file)} was replaced ${attempt} times while it was being pruned; try again`, {
        headers: { 'Retry-After': '1' },
      });
    }
  }
}

/** One prune of `file`: its counts, or undefined when the log was replaced by another before the first rename (try again). */
function pruneOnce(file: string, cutoff: Date, options: PruneOptions): Promise<PruneCounts | undefined> {
  return withOpenLog(file, async (handle, size) => {
    const mode = (await handle.stat()).mode & 0o7777;
    const temps: { path: string; handle: FileHandle; renamed: boolean }[] = [];
    const newTemp = async () => {
      const temp = { path: tempPath(file), handle: undefined as unknown as FileHandle, renamed: false };
      temp.handle = await open(temp.path, 'wx+', mode);
      temps.push(temp);
      return temp;
    };
    const locked = <T>(fn: (lock: HeldLock) => Promise<T>) => withFileLock(logLockFile(file), fn, { timeoutMs: options.lockTimeoutMs });
    try {
      let out = await newTemp();
      const scanned = await scan(handle, size, cutoff, out.handle);
      if (!scanned.counts.dropped) return scanned.counts;
      // The torn last line, and what was appended since, before the lock; what is copied so far is synced.
      let source = handle;
      let copied = await catchUp(source, out.handle, scanned.linesEnd);
      await out.handle.sync();
      /** The late lines the round under way puts in place: where they are in the file renamed away before. */
      let pending: { from: FileHandle; start: number; end: number } | undefined;
      /**
       * Late lines exist only in a file renamed away: appended under the lock or, when it cannot be had (another
       * writer holds it past the timeout), without it (O_APPEND, whole lines in one write), never dropped.
       */
      const appendLate = async (from: FileHandle, start: number, end: number) => {
        let done = false;
        try {
          await locked(async () => {
            await appendRange(from, file, start, end);
            done = true;
          });
        } catch (err) {
          if (done) return;
          await appendRange(from, file, start, end);
          if (!isLockTimeout(err)) throw err;
        }
      };
      for (let round = 1; ; round++) {
        let renamed: { written: number } | undefined;
        try {
          renamed = await locked(async (lock) => {
            if (!isFileAt(source, file)) return undefined;
            await out.handle.chmod(mode);
            // What writers appended while the lock was free, then a last check and sync; the chase that follows
            // copies only what writers without the lock append meanwhile, and the rename follows its last look.
            copied = await catchUp(source, out.handle, copied);
            await lock.check();
            await out.handle.sync();
            copied = chaseSync(source.fd, out.handle.fd, copied);
            // The size of the new file at the rename: writers append to it from then on.
            const written = fstatSync(out.handle.fd).size;
            lock.checkSync();
            renameSync(out.path, file);
            out.renamed = true;
            // The chase's lines (only those of writers without the lock, which sync nothing themselves), then the rename.
            await out.handle.sync();
            await syncFolder(path.dirname(file));
            return { written };
          });
        } catch (err) {
          // A later round that cannot rename (the lock taken by another past the timeout): the log is pruned;
          // its late lines go at the end. The first round has renamed nothing yet: nothing to save.
          if (!pending || !isLockTimeout(err)) throw err;
          await appendLate(pending.from, pending.start, pending.end);
          break;
        }
        if (!renamed) {
          // Replaced before our first rename: prune the new log from its start. Replaced after it (by another
          // prune, which read our renamed file and what was appended to it): only the late lines this round
          // was to put in place are in neither, and can only be appended.
          if (round === 1) return undefined;
          if (pending) await appendLate(pending.from, pending.start, pending.end);
          break;
        }
        await options.renamed?.(round);
        const late = await lateEnd(source, copied, LATE_WRITE_MS);
        if (late === undefined) break;
        if (round >= MAX_ROUNDS) {
          await appendLate(source, copied, late);
          break;
        }
        // Lines written to the old file after the last look go where the rename was, before what was appended
        // since: one more round, its copy made without the lock as the first was.
        const next = await newTemp();
        await copyRange(out.handle, next.handle, 0, renamed.written);
        await copyRange(source, next.handle, copied, late);
        pending = { from: source, start: copied, end: late };
        source = out.handle;
        copied = await catchUp(source, next.handle, renamed.written);
        await next.handle.sync();
        out = next;
      }
      return { ...scanned.counts, bytesAfter: (await stat(file)).size };
    } finally {
      for (const temp of temps) {
        await temp.handle.close();
        if (!temp.renamed) await unlink(temp.path).catch(() => {});
      }
    }
  });
}

/**
 * Copies what was appended to `source` after `at` until a look finds it no
 * longer growing (or MAX_LOOKS looks), and answers where the copy stopped.
 * Synchronous, so that it outruns writers appending a line at a time (an
 * asynchronous copy, a trip to the thread pool per read, falls behind them
 * and leaves late lines on every rename), and so that the caller's rename
 * can follow its last look with nothing in between. Unsynced: the chase
 * holds only the bytes appended during it, synced after the rename.
 */
function chaseSync(source: number, out: number, at: number): number {
  const buffer = Buffer.allocUnsafe(COPY_BYTES);
  for (let look = 1; look <= MAX_LOOKS; look++) {
    const end = fstatSync(source).size;
    if (end <= at) break;
    while (at < end) {
      const read = readSync(source, buffer, 0, Math.min(buffer.length, end - at), at);
      if (read === 0) break;
      writeAllSync(out, buffer, read);
      at += read;
    }
  }
  return at;
}

function writeAllSync(fd: number, buffer: Buffer, length: number): void {
  for (let done = 0; done < length; ) done += writeSync(fd, buffer, done, length - done);
}

/** Whether the open `handle` is the file at `file` now (same device and inode: not replaced since it was opened). */
function isFileAt(handle: FileHandle, file: string): boolean {
  const open = fstatSync(handle.fd);
  try {
    const now = lstatSync(file);
    return now.ino === open.ino && now.dev === open.dev;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

function tempPath(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.prune.tmp`);
}

/** Copies what was appended to `source` after `at` until it stops growing; returns where the copy stopped. */
async function catchUp(source: FileHandle, out: FileHandle, at: number): Promise<number> {
  for (let end = (await source.stat()).size; at < end; end = (await source.stat()).size) at = await copyRange(source, out, at, end);
  return at;
}

/**
 * Where a file renamed away ends, when a writer that opened it before the
 * rename appended to it past `copied`, looked at LATE_WRITE_MS after the
 * rename (every writer caught in the instant has written by then, unless
 * paused); undefined when none did.
 */
async function lateEnd(source: FileHandle, copied: number, waitMs: number): Promise<number | undefined> {
  if (waitMs) await new Promise((r) => setTimeout(r, waitMs));
  const size = (await source.stat()).size;
  return size > copied ? size : undefined;
}

/** Opens `file` for reading and runs `fn` with its size; zero counts when there is no file. */
async function withOpenLog<T>(file: string, fn: (handle: FileHandle, size: number) => Promise<T>): Promise<T | PruneCounts> {
  let handle: FileHandle;
  try {
    handle = await openDataFile(file);
  } catch (err) {
    if (isNotFound(err)) return { kept: 0, dropped: 0, undated: 0, bytesBefore: 0, bytesAfter: 0 };
    throw err;
  }
  try {
    return await fn(handle, (await handle.stat()).size);
  } finally {
    await handle.close();
  }
}

/**
 * Sorts the complete lines of the first `size` bytes of the log (a line
 * longer than MAX_LINE_BYTES, which readers skip, counts as undated), writing
 * the kept ones to `out` (when given) as it goes, in pieces of about
 * COPY_BYTES. `linesEnd`: where the complete lines end (a torn last line
 * starts there). `bytesAfter` counts the torn last line as kept.
 */
async function scan(handle: FileHandle, size: number, cutoff: Date, out?: FileHandle): Promise<{ counts: PruneCounts; linesEnd: number }> {
  const limit = cutoff.getTime();
  const counts: PruneCounts = { kept: 0, dropped: 0, undated: 0, bytesBefore: size, bytesAfter: size };
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const flush = async () => {
    if (out && pendingBytes) await out.write(Buffer.concat(pending, pendingBytes));
    pending = [];
    pendingBytes = 0;
  };
  // Until the first line dropped, nothing is written: the lines before it are then copied as they are.
  let read = 0;
  let writing = false;
  const keep = async (bytes: Buffer) => {
    read += bytes.length;
    if (!out || !writing) return;
    pending.push(bytes);
    pendingBytes += bytes.length;
    if (pendingBytes >= COPY_BYTES) await flush();
  };
  const linesEnd = await readLinesForward(handle, size, {
    line: async (line) => {
      const time = recordTime(line.toString('utf8'));
      if (time !== undefined && time < limit) {
        counts.dropped++;
        counts.bytesAfter -= line.length;
        if (out && !writing) await copyRange(handle, out, 0, read);
        writing = true;
        read += line.length;
        return;
      }
      counts.kept++;
      if (time === undefined) counts.undated++;
      await keep(line);
    },
    // A line too long for any reader is not parsed: it cannot be dated, and is kept.
    longPiece: async (piece, ended) => {
      if (ended) {
        counts.kept++;
        counts.undated++;
      }
      await keep(piece);
    },
  });
  await flush();
  return { counts, linesEnd };
}

async function copyRange(from: FileHandle, to: FileHandle, start: number, end: number): Promise<number> {
  const buffer = Buffer.alloc(Math.min(COPY_BYTES, end - start));
  let at = start;
  while (at < end) {
    const { bytesRead } = await from.read(buffer, 0, Math.min(buffer.length, end - at), at);
    if (bytesRead === 0) break;
    await to.write(buffer, 0, bytesRead);
    at += bytesRead;
  }
  return at;
}

/** Appends the bytes of `from` between `start` and `end` to `file` in one write (O_APPEND), synced. */
async function appendRange(from: FileHandle, file: string, start: number, end: number): Promise<number> {
  const buffer = Buffer.alloc(end - start);
  const { bytesRead } = await from.read(buffer, 0, buffer.length, start);
  const out = await openDataFile(file, 'append');
  try {
    await out.write(buffer, 0, bytesRead);
    await out.sync();
  } finally {
    await out.close();
  }
  return start + bytesRead;
}

async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
