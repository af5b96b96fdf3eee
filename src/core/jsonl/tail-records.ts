import { parseRecord, type JsonRecord } from './parse-record.ts';
import { BackwardLines, MORE } from './read-lines-backward.ts';
import { parseSharedRecord } from './shared-records.ts';

export interface TailResult {
  /** Newest first. */
  records: JsonRecord[];
  /** Lines passed over on the way because they were not JSON objects or were longer than MAX_LINE_BYTES. */
  skipped: number;
}

export interface TailOptions {
  /** Keep only records for which this is true. */
  where?: (record: JsonRecord) => boolean;
  /** Stop reading (before `limit` is reached) at the first record for which this is true. */
  until?: (record: JsonRecord) => boolean;
  /**
   * The records may be shared (see shared-records.ts): a line read before is
   * not parsed again, and its record is frozen. For the reads of the newest
   * few lines that answers are made of, not for scans.
   */
  shared?: boolean;
}

/**
 * The newest `limit` records of a JSONL log, newest first, read backwards
 * from the end: O(limit) for an unfiltered read, whatever the file's size.
 *
 * @example
 *   const { records, skipped } = await tailRecords(path.join(dir, 'trends.jsonl'), 100);
 */
export async function tailRecords(file: string, limit: number, options: TailOptions = {}): Promise<TailResult> {
  const records: JsonRecord[] = [];
  let skipped = 0;
  if (limit <= 0) return { records, skipped };
  const lines = await BackwardLines.open(file);
  if (lines === undefined) return { records, skipped };
  const { where, until } = options;
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
      if (!record) {
        skipped++;
        continue;
      }
      if (until?.(record)) break;
      if (where && !where(record)) continue;
      records.push(record);
      if (records.length >= limit) break;
    }
  } finally {
    await lines.close();
  }
  return { records, skipped };
}
