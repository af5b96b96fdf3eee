import type { RecordPage } from '../store/store.ts';
import type { JsonRecord } from './parse-record.ts';
import { scanRecords } from './scan-records.ts';

/**
 * Every record of the JSONL log `file` that `accept` takes, oldest first,
 * streamed a page of at most `pageSize` at a time (memory bounded by a
 * page); each page counts the lines of its stretch that are not records. For copying a store.
 */
export async function* recordPages(file: string, accept: (record: JsonRecord) => boolean, pageSize: number): AsyncGenerator<RecordPage> {
  const stats = { skipped: 0 };
  let records: JsonRecord[] = [];
  for await (const record of scanRecords(file, stats)) {
    if (!accept(record)) stats.skipped++;
    else records.push(record);
    if (records.length >= pageSize) {
      yield { records, skipped: stats.skipped };
      records = [];
      stats.skipped = 0;
    }
  }
  if (records.length > 0 || stats.skipped > 0) yield { records, skipped: stats.skipped };
}
