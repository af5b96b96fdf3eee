import { dataPath } from '../data-files.ts';
import { recordPages } from '../jsonl/record-pages.ts';
import { recentRecords } from '../recent-records.ts';
import type { RecordLog } from '../record-log.ts';
import { pruneLog } from '../retention/prune-log.ts';
import { acceptOf } from '../series-records.ts';
import { readStateDocument } from '../state-files.ts';
import type { Series, SeriesName } from '../store/store.ts';
import { appendSeries } from './append-series.ts';
import { dataDirRange } from '../rollups/data-dir-range.ts';
import { followRollups } from '../rollups/follow-rollups.ts';
import type { RangeSeries, RollupRetention } from '../rollups/range-types.ts';
import { rebuildRollups } from '../rollups/rebuild-rollups.ts';
import { mergeHeartbeat, restoreHeartbeat } from './heartbeat-merge.ts';
import { heartbeatQueue } from './heartbeat-queue.ts';
import { ingestRounds, storeOnce } from './ingest-rounds.ts';
import { assertSeriesRecords, NODE, restoreLog, seriesFacet, seriesLog } from './series-logs.ts';

const SERIES: readonly SeriesName[] = ['trends', 'disk', 'pulse'];
const RANGE_SERIES: readonly RangeSeries[] = ['trends', 'disk'];

/**
 * The series on the data dir (DESIGN.md 3 and 7a), every method (loaded by
 * data-dir-series.ts at the first one that needs more than a read of every
 * node's newest records): `trends.jsonl`,
 * `disk.jsonl`, `health-pulse.jsonl` and `state/heartbeat.json`, the files
 * other tools may write too. Reads of every node are the newest lines of the
 * file, read backwards (recentRecords: as fast as before there was a hub);
 * reads of one node or mount go through each log's index (series-logs.ts),
 * which reads back only the records of the answer. The hub's writes are
 * keyed appends: a sample known by its node and `ts` is stored once, also
 * against other processes writing the same files; the requests that arrive
 * together are written together (ingest-rounds.ts).
 */
export function indexedSeries(dataDir: string, retention: RollupRetention): Series {
  const log = logsOf(dataDir, seriesLog);
  const ranges = dataDirRange(dataDir, log, retention);
  const restoreInto = logsOf(dataDir, restoreLog);
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

    ingest: ingestRounds(log, heartbeatQueue(dataDir)),

    async nodes() {
      const values = await Promise.all(SERIES.map((series) => log(series).facetValues(NODE)));
      return [...new Set(values.flat())].sort();
    },

    pages: (series, pageSize) => recordPages(dataPath(dataDir, series), acceptOf(series), pageSize),

    /**
     * Each record once by recordKey, in the given order: a sample's by its
     * node and `ts` (disk: and mount), another tool's record (no `node` or
     * `ts`) by its content, field for field as stored, as PostgreSQL does.
     * Both are looked up in restoreLog's index, kept for the life of this
     * object: built by one pass over the file on the first call, then fed
     * only what is appended (by any process), built again when prune
     * replaces the file or it shrinks. It keeps a hash and a position per
     * record, not the records: a copy page by page reads the log once, and
     * then only the lines whose hash a page's records share, to compare.
     */
    async restore(series, records) {
      assertSeriesRecords(series, records);
      const results = await storeOnce(restoreInto(series), series, records);
      const created = results.filter((r) => r.outcome === 'created').length;
      return { created, present: records.length - created };
    },

    restoreHeartbeat: (data) => restoreHeartbeat(dataDir, data),

    async prune(series, before, options) {
      const file = await pruneLog(dataDir, series, before, { dryRun: options?.dryRun === true });
      return { removed: file.dropped, file };
    },

    range: (series, query) => ranges.range(series, query),
    rebuildRollups: (series) => rebuildRollups(dataDir, series, retention),
    followRollups: async (report) => {
      const follower = followRollups(dataDir, RANGE_SERIES, retention, report);
      // Then the logs' index, in the background, so a first raw range (a chart of the last hour) need not wait for it.
      void follower.ready.then(() => Promise.all(RANGE_SERIES.map((series) => log(series).refresh()))).catch(() => {});
      return follower;
    },
  };
}

/** One RecordLog per series, made by `make` on first use and kept. */
function logsOf(dataDir: string, make: (dataDir: string, series: SeriesName) => RecordLog): (series: SeriesName) => RecordLog {
  const logs = new Map<SeriesName, RecordLog>();
  return (series) => {
    let found = logs.get(series);
    if (!found) logs.set(series, (found = make(dataDir, series)));
    return found;
  };
}
