import { recentRecords } from '../recent-records.ts';
import { readStateDocument } from '../state-files.ts';
import type { Series } from '../store/store.ts';
import { lazySeries } from './lazy-series.ts';
import { DEFAULT_ROLLUP_RETENTION, type RollupRetention } from '../rollups/range-types.ts';

/**
 * The series on the data dir (DESIGN.md 3 and 7a). What every read command
 * asks for, every node's newest records and the heartbeat, is answered here
 * straight from the files; the rest (reads of one node or mount through the
 * logs' index, the writes, copy and prune: indexed-series.ts) is loaded at
 * its first use, so `estate trends` starts without the index, the locks and
 * their modules.
 */
export function dataDirSeries(dataDir: string, retention: RollupRetention = DEFAULT_ROLLUP_RETENTION): Series {
  let loading: Promise<Series> | undefined;
  const indexed = lazySeries(() => (loading ??= import('./indexed-series.ts').then((m) => m.indexedSeries(dataDir, retention))));
  return {
    ...indexed,
    newest: (series, limit, where) => (where?.node === undefined && where?.mount === undefined ? recentRecords(dataDir, series, limit) : indexed.newest(series, limit, where)),
    heartbeat: () => readStateDocument(dataDir, 'heartbeat'),
  };
}
