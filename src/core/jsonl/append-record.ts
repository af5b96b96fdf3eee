import { type FileHandle, mkdir, open } from 'node:fs/promises';
import path from 'node:path';
import { isNotFound } from '../fs-errors.ts';
import { openDataFile } from '../open-data-file.ts';
import type { JsonRecord } from './parse-record.ts';

const NEWLINE = 0x0a;

export interface AppendedSpan {
  /** Byte offset where the first appended line starts. */
  start: number;
  /** Byte offset just past the last appended '\n' (the file's size afterwards). */
  end: number;
}

/** `appendRecordsTo`'s span, with the bytes written from `start` to `end` (without the '\n' that ended a torn line first). */
export interface AppendedLines extends AppendedSpan {
  lines: Buffer;
}

/**
 * Appends `records` to a JSONL file as one write of `json\n…json\n`, then
 * fdatasync: when the promise resolves, the lines are
 * on disk. The caller must hold the file's writer lock: the check of the last
 * byte and the write are not atomic against other writers.
 *
 * A file that does not end in '\n' (a writer crashed mid-line) gets a '\n'
 * first, in the same write, so the torn line stays a line of its own that
 * readers skip and no record is glued onto it. If the write or the sync
 * fails, the file is cut back to its old size (best effort) and the error is
 * thrown: nothing is acknowledged that may not be on disk. A crash at any
 * point leaves at most one torn last line.
 *
 * @example
 *   await appendRecords('work/completions.jsonl', [record]);
 */
export async function appendRecords(file: string, records: readonly JsonRecord[]): Promise<AppendedSpan> {
  const handle = await openForAppend(file);
  try {
    const { start, end } = await appendRecordsTo(handle, file, records);
    return { start, end };
  } finally {
    await handle.close();
  }
}

/**
 * `appendRecords` through a handle `openForAppend` opened (a writer that
 * also reads the file, the same open for both); the caller closes it.
 * `size`, when given, is the file's size as the caller just saw it under
 * the lock (one fstat less); `endsLine`, that the caller knows the file
 * ends a line there (it has read it to that end: one read less).
 */
export async function appendRecordsTo(handle: FileHandle, file: string, records: readonly JsonRecord[], size?: number, endsLine = false): Promise<AppendedLines> {
  // JSON.stringify escapes every newline inside strings: one record is one line.
  let lines = '';
  for (const record of records) lines += `${JSON.stringify(record)}\n`;
  size ??= (await handle.stat()).size;
  const torn = size > 0 && !endsLine && (await lastByte(handle, size)) !== NEWLINE;
  const payload = Buffer.from(`${torn ? '\n' : ''}${lines}`, 'utf8');
  try {
    let written = 0;
    // One write(2) for the whole payload; a short write (disk full, signal) continues where it stopped.
    while (written < payload.length) {
      const { bytesWritten } = await handle.write(payload, written, payload.length - written);
      if (bytesWritten <= 0) throw new Error(`appendRecords: no progress writing ${file}`);
      written += bytesWritten;
    }
    await handle.datasync();
  } catch (err) {
    await handle.truncate(size).catch(() => {});
    throw err;
  }
  if (size === 0) await syncDirectory(path.dirname(file));
  return { start: size + (torn ? 1 : 0), end: size + payload.length, lines: torn ? payload.subarray(1) : payload };
}

/** Opens `file` for appending and reading, creating it (and its folder) when missing; never through a link (`openDataFile`). */
export async function openForAppend(file: string): Promise<FileHandle> {
  try {
    return await openDataFile(file, 'append');
  } catch (err) {
    if (!isNotFound(err)) throw err;
    await ensureFolder(file);
    return openDataFile(file, 'append');
  }
}

async function lastByte(handle: FileHandle, size: number): Promise<number | undefined> {
  const buf = Buffer.alloc(1);
  const { bytesRead } = await handle.read(buf, 0, 1, size - 1);
  return bytesRead === 1 ? buf[0] : undefined;
}

/** Creates the file's folder (mode 0700) if it is missing, durably: the new folder's entry is synced too. */
export async function ensureFolder(file: string): Promise<void> {
  const made = await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  if (made !== undefined) await syncDirectory(path.dirname(made));
}

/** fsync of a folder, so a newly created (or renamed) file's entry survives a crash. */
export async function syncDirectory(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch (err) {
    // Some file systems refuse fsync on a directory; the data itself is synced.
    if (!isNotFound(err) && (err as NodeJS.ErrnoException).code !== 'EINVAL' && (err as NodeJS.ErrnoException).code !== 'EISDIR') throw err;
  } finally {
    await handle?.close();
  }
}
