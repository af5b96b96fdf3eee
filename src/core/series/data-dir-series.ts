import { dataPath } from '../data-files.ts';
import { withFileLock } from '../file-lock.ts';
import { appendRecords } from '../jsonl/append-record.ts';
import type { JsonRecord } from '../jsonl/parse-record.ts';
import { recordPages } from '../jsonl/record-pages.ts';
import { recentRecords } from '../recent-records.ts';
import type { AppendResult, RecordLog } from '../record-log.ts';
import { logLockFile } from '../retention/prune-file.ts';
import { pruneLog } from '../retention/prune-log.ts';
import { acceptOf } from '../series-records.ts';
import { readStateDocument } from '../state-files.ts';
import type { Series, SeriesName } from '../store/store.ts';
import { appendSeries } from './append-series.ts';
import { newestEntries } from './heartbeat-document.ts';
import { mergeHeartbeat, mergeHeartbeats, restoreHeartbeat } from './heartbeat-merge.ts';
import { assertSeriesRecords, checkedSample, NODE, sampleKey, seriesFacet, seriesLog } from './series-logs.ts';

const SERIES: readonly SeriesName[] = ['trends', 'disk', 'pulse'];

/**
 * The series on the data dir (DESIGN.md 3 and 7a): `trends.jsonl`,
 * `disk.jsonl`, `health-pulse.jsonl` and `state/heartbeat.json`, the files
 * other tools may write too. Reads of every node are the newest lines of the
 * file, read backwards (recentRecords: as fast as before there was a hub);
 * reads of one node or mount go through each log's index (series-logs.ts),
 * which reads back only the records of the answer. The hub's writes are
 * keyed appends: a sample known by its node and `ts` is stored once, also
 * against other processes writing the same files.
 */
export function dataDirSeries(dataDir: string): Series {
  const logs = new Map<SeriesName, RecordLog>();
  const log = (series: SeriesName): RecordLog => {
    let found = logs.get(series);
    if (!found) logs.set(series, (found = seriesLog(dataDir, series)));
    return found;
  };
  return {
    appendSample: (sample) => appendSeries(dataDir, sample),
    mergeHeartbeat: (entry) => mergeHeartbeat(dataDir, entry),
    heartbeat: () => readStateDocument(dataDir, 'heartbeat'),

    async newest(series, limit, where) {
      const facet = seriesFacet(where);
      if (!facet) return recentRecords(dataDir, series, limit);
      const { records, skipped } = await log(series).newest(limit, facet);
      return { items: records, count: records.length, limit, skipped_lines: skipped };
    },

    async ingest(samples) {
      const parts = samples.map(checkedSample);
      // Disks and pulse before the trend point, which says the sample is stored: a crash between them is completed when the sample is sent again.
      await storeOnce(log('disk'), 'disk', parts.flatMap((p) => p.disks));
      await storeOnce(log('pulse'), 'pulse', parts.map((p) => p.pulse));
      const trends = await storeOnce(log('trends'), 'trends', parts.map((p) => p.trend));
      const stored = trends.filter((r) => r.outcome === 'created').length;
      if (samples.length) await mergeHeartbeats(dataDir, newestEntries(samples), { keep: 'newer' });
      return { stored, duplicates: samples.length - stored };
    },

    async nodes() {
      const values = await Promise.all(SERIES.map((series) => log(series).facetValues(NODE)));
      return [...new Set(values.flat())].sort();
    },

    pages: (series, pageSize) => recordPages(dataPath(dataDir, series), acceptOf(series), pageSize),

    async restore(series, records) {
      assertSeriesRecords(series, records);
      let created = 0;
      let present = 0;
      // In the given order: runs of keyed records stored once each, runs of records without a key appended as they are.
      for (let start = 0; start < records.length; ) {
        const keyed = sampleKey(series, records[start] as JsonRecord) !== undefined;
        let end = start;
        while (end < records.length && (sampleKey(series, records[end] as JsonRecord) !== undefined) === keyed) end++;
        const run = records.slice(start, end);
        if (keyed) {
          const results = await storeOnce(log(series), series, run);
          const made = results.filter((r) => r.outcome === 'created').length;
          created += made;
          present += run.length - made;
        } else {
          const file = dataPath(dataDir, series);
          await withFileLock(logLockFile(file), async (lock) => {
            await lock.check();
            await appendRecords(file, run as JsonRecord[]);
          });
          created += run.length;
        }
        start = end;
      }
      return { created, present };
    },

    restoreHeartbeat: (data) => restoreHeartbeat(dataDir, data),

    async prune(series, before, options) {
      const file = await pruneLog(dataDir, series, before, { dryRun: options?.dryRun === true });
      return { removed: file.dropped, file };
    },
  };
}

/** Appends each record unless a record with its key is stored (in `log` or earlier in `records`). */
function storeOnce(log: RecordLog, series: SeriesName, records: readonly JsonRecord[]): Promise<AppendResult[]> {
  return Promise.all(records.map((record) => log.append({ key: sampleKey(series, record) as string, same: () => true, create: () => record })));
}
