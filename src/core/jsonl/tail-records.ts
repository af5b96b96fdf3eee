import path from 'node:path';
import { isNotFound } from '../fs-errors.ts';
import { type FileRead, openForRead } from '../held-data-files.ts';
import { parseRecord, type JsonRecord } from './parse-record.ts';
import { BackwardLines, giveChunk, MORE, takeChunk } from './read-lines-backward.ts';
import { parseSharedRecord } from './shared-records.ts';

export interface TailResult {
  /** Newest first. */
  records: JsonRecord[];
  /** Lines passed over on the way because they were not JSON objects or were longer than MAX_LINE_BYTES. */
  skipped: number;
}

export interface TailOptions {
  /** What the log counts as a record: others are skipped and counted, as lines that are not JSON objects are. */
  accept?: (record: JsonRecord) => boolean;
  /** Keep only records for which this is true. */
  where?: (record: JsonRecord) => boolean;
  /** Stop reading (before `limit` is reached) at the first record for which this is true. */
  until?: (record: JsonRecord) => boolean;
  /**
   * The records may be shared (see shared-records.ts): a line read before is
   * not parsed again, and its record is frozen; an unfiltered read of bytes
   * read before answers the same frozen result. For the reads of the newest
   * few lines that answers are made of, not for scans.
   */
  shared?: boolean;
}

/**
 * The last shared, unfiltered tail of a log, per log and limit, with the
 * bytes it was read from (from the newline before its oldest line, or the
 * start of the file, to the end): a read with the same `accept` that finds
 * the file the same size and those bytes the same has the same answer. At most MAX_REMEMBERED, each
 * within the last chunk of its file.
 */
interface Remembered {
  accept: TailOptions['accept'];
  size: number;
  from: number;
  bytes: Buffer;
  result: TailResult;
}

const MAX_REMEMBERED = 32;
const remembered = new Map<string, Remembered>();

/**
 * The newest `limit` records of a JSONL log, newest first, read backwards
 * from the end: O(limit) for an unfiltered read, whatever the file's size.
 * A shared unfiltered read whose bytes are those of the last one answers
 * that one's result again (frozen: see shared-records.ts).
 *
 * @example
 *   const { records, skipped } = await tailRecords(path.join(dir, 'trends.jsonl'), 100);
 */
export async function tailRecords(file: string, limit: number, options: TailOptions = {}): Promise<TailResult> {
  const records: JsonRecord[] = [];
  let skipped = 0;
  if (limit <= 0) return { records, skipped };
  let opened: FileRead;
  try {
    opened = await openForRead(file);
  } catch (err) {
    if (isNotFound(err)) return { records, skipped };
    throw err;
  }
  const { where, until } = options;
  const key = options.shared && !where && !until ? `${limit}:${path.resolve(file)}` : undefined;
  const known = key === undefined ? undefined : remembered.get(key);
  if (known !== undefined && known.accept === options.accept && known.size === opened.size) {
    let same;
    try {
      same = await sameBytes(opened, known.from, known.bytes);
    } catch (err) {
      await opened.done();
      throw err;
    }
    if (same) {
      await opened.done();
      return known.result;
    }
  }
  const lines = BackwardLines.over(opened);
  const parse = options.shared ? parseSharedRecord : parseRecord;
  try {
    for (;;) {
      const line = lines.next();
      if (line === MORE) {
        await lines.read();
        continue;
      }
      if (line === undefined) break;
      if (line !== null && !line.trim()) continue;
      const record = line === null ? undefined : parse(line);
      if (!record || (options.accept && !options.accept(record))) {
        skipped++;
        continue;
      }
      if (until?.(record)) break;
      if (where && !where(record)) continue;
      records.push(record);
      if (records.length >= limit) break;
    }
    if (key !== undefined) {
      // Stopped at the limit: what came before that line's newline does not matter.
      const from = records.length >= limit ? Math.max(0, lines.lineStart - 1) : 0;
      const bytes = lines.copyFrom(from);
      if (bytes !== undefined) {
        const result: TailResult = Object.freeze({ records: Object.freeze(records) as JsonRecord[], skipped });
        remembered.delete(key);
        remembered.set(key, { accept: options.accept, size: lines.size, from, bytes, result });
        if (remembered.size > MAX_REMEMBERED) remembered.delete(remembered.keys().next().value as string);
        return result;
      }
    }
  } finally {
    await lines.close();
  }
  return { records, skipped };
}

/** Whether the bytes of `file` from `from` to its end are `bytes`. */
async function sameBytes(file: FileRead, from: number, bytes: Buffer): Promise<boolean> {
  const chunk = takeChunk(bytes.length);
  try {
    const { bytesRead } = await file.handle.read(chunk, 0, bytes.length, from);
    return bytesRead === bytes.length && chunk.subarray(0, bytesRead).equals(bytes);
  } finally {
    giveChunk(chunk);
  }
}
