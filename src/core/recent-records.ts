import { dataPath } from './data-files.ts';
import type { JsonRecord } from './jsonl/parse-record.ts';
import { shareValue } from './jsonl/shared-records.ts';
import { tailRecords } from './jsonl/tail-records.ts';
import { acceptOf, type SeriesLog } from './series-records.ts';

export interface Page<T = JsonRecord> {
  /** Newest first. */
  items: T[];
  count: number;
  limit: number;
  /** Lines passed over while reading this page because they were not JSON objects or not records of the log. */
  skipped_lines: number;
}

/**
 * The newest `limit` records of one of the data dir's series logs,
 * optionally filtered. Lines that are not records of the log (see
 * series-records.ts) are skipped and counted. Unfiltered, the records are shared (frozen; see shared-records.ts),
 * and so is the page when the log's end is as the last read found it.
 */
export async function recentRecords(
  dataDir: string,
  log: SeriesLog,
  limit: number,
  where?: (record: JsonRecord) => boolean,
): Promise<Page> {
  const accept = acceptOf(log);
  const { records, skipped } = await tailRecords(dataPath(dataDir, log), limit, where ? { accept, where } : { accept, shared: true });
  if (!Object.isFrozen(records)) return { items: records, count: records.length, limit, skipped_lines: skipped };
  // The same frozen records as a read before (the log's end did not change): the same page, shared too.
  let page = pages.get(records);
  if (page === undefined) {
    page = shareValue({ items: records, count: records.length, limit, skipped_lines: skipped });
    pages.set(records, page);
  }
  return page;
}

/** Pages of the shared results of tailRecords (a frozen result is only ever of one limit). */
const pages = new WeakMap<readonly JsonRecord[], Page>();
