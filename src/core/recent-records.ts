import { dataPath, type DataFile } from './data-files.ts';
import type { JsonRecord } from './jsonl/parse-record.ts';
import { tailRecords } from './jsonl/tail-records.ts';

export interface Page<T = JsonRecord> {
  /** Newest first. */
  items: T[];
  count: number;
  limit: number;
  /** Lines passed over while reading this page because they were not JSON objects. */
  skipped_lines: number;
}

/**
 * The newest `limit` records of one of the data dir's logs, optionally
 * filtered. Unfiltered, the records are shared (frozen; see shared-records.ts).
 */
export async function recentRecords(
  dataDir: string,
  log: DataFile,
  limit: number,
  where?: (record: JsonRecord) => boolean,
): Promise<Page> {
  const { records, skipped } = await tailRecords(dataPath(dataDir, log), limit, where ? { where } : { shared: true });
  return { items: records, count: records.length, limit, skipped_lines: skipped };
}

/** The newest record of a log (optionally the newest that matches), or undefined when there is none. */
export async function latestRecord(
  dataDir: string,
  log: DataFile,
  where?: (record: JsonRecord) => boolean,
): Promise<JsonRecord | undefined> {
  const { items } = await recentRecords(dataDir, log, 1, where);
  return items[0];
}
