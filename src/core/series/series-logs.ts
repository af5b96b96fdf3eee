import { dataPath } from '../data-files.ts';
import type { FacetFilter } from '../jsonl/indexed-file.ts';
import type { JsonRecord } from '../jsonl/parse-record.ts';
import { RecordLog } from '../record-log.ts';
import { rfc3339Ms } from '../rollups/range-time.ts';
import { logLockFile } from '../retention/prune-file.ts';
import { acceptOf, SERIES_RECORDS } from '../series-records.ts';
import { EstateError } from '../../errors.ts';
import type { SeriesFilter, SeriesName, SeriesSample } from '../store/store.ts';

/** The facets of a series log's index: a record's node, its mount, and both together. */
export const NODE = 'node';
export const MOUNT = 'mount';
export const NODE_MOUNT = 'node+mount';

/**
 * A sample's identity in a series (DESIGN.md 7a): a trend point and a pulse
 * entry by node and `ts`, a disk snapshot by node, `ts` and mount (strings
 * each). A record without them (another tool's, with no `node`) has none:
 * it is known by its content instead (recordKey).
 *
 * @example
 *   sampleKey('disk', { node: 'web-1', ts: '2026-01-01T00:00:00Z', mount: '/' }) // '5:web-120:2026-01-01T00:00:00Z/'
 */
export function sampleKey(series: SeriesName, record: JsonRecord): string | undefined {
  const { node, ts } = record;
  if (typeof node !== 'string' || typeof ts !== 'string') return undefined;
  // Each part but the last after its length: no two identities make one key. (Made for every record a hub indexes: a concatenation, not JSON.)
  if (series !== 'disk') return `${node.length}:${node}${ts}`;
  return typeof record.mount === 'string' ? `${node.length}:${node}${ts.length}:${ts}${record.mount}` : undefined;
}

/**
 * A record's identity in its series log: its sample key, or for a record
 * without one (another tool's) its content, `JSON.stringify(record)`. Two
 * such records are one when that text is the same: the same fields in the
 * same order with the same values, as stored (a line as JSON.parse reads
 * it, so a line's spacing and escapes or `1.0` against `1` do not tell two
 * apart; an order of fields does). It is the text PostgreSQL's restore
 * compares (postgres-series.ts keeps each record as `json`, the text
 * JSON.stringify gave it), so both stores take the same records for one.
 *
 * @example
 *   recordKey('trends', { ts: '2026-01-01T00:00:00Z', load: 3 }) // '{"ts":"2026-01-01T00:00:00Z","load":3}'
 */
export function recordKey(series: SeriesName, record: JsonRecord): string {
  return sampleKey(series, record) ?? JSON.stringify(record);
}

/** A sample's parts as records of their series, each with its key; a `validation` error when a part is not (DESIGN.md 7a: every part has the sample's node and ts). */
export function checkedSample(sample: SeriesSample, i: number): { trend: JsonRecord; disks: JsonRecord[]; pulse: JsonRecord } {
  const trend = sample.trend as unknown as JsonRecord;
  const disks = sample.disks as unknown as JsonRecord[];
  const pulse = sample.pulse as unknown as JsonRecord;
  const fits = (series: SeriesName, r: JsonRecord) => sampleKey(series, r) !== undefined && r.node === trend.node && r.ts === trend.ts && acceptOf(series)(r);
  if (!fits('trends', trend) || !fits('pulse', pulse) || !disks.every((d) => fits('disk', d))) {
    throw new EstateError('validation', `sample ${i}: every part needs the sample's node and ts (strings), a disk snapshot its mount, each field its type`);
  }
  return { trend, disks, pulse };
}

/** A `validation` error unless every record is one of the series' (series-records.ts: a typed field of another type is not); checked before anything is stored. */
export function assertSeriesRecords(series: SeriesName, records: readonly JsonRecord[]): void {
  if (!records.every(acceptOf(series))) throw new EstateError('validation', `not a record of the ${series} series: a field of the wrong type`);
}

const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

/**
 * The data dir's log of `series` (trends.jsonl, disk.jsonl,
 * health-pulse.jsonl) as a RecordLog: the records its readers accept
 * (series-records.ts), keyed by sample identity (sampleKey), with the facets
 * `node`, `mount` and `node+mount`, so a read of one node (or mount) reads
 * only its records. The writer lock is the one `estate prune` and the
 * collector take (`<file>.lock`). The index reads only the fields these need.
 */
export function seriesLog(dataDir: string, series: SeriesName): RecordLog {
  return new RecordLog({
    ...logOptions(dataDir, series),
    key: (r) => sampleKey(series, r),
    // The range routes' time column (DESIGN.md 7b): trend points and disk snapshots only.
    ...(series === 'pulse' ? {} : { time: (r: JsonRecord) => rfc3339Ms(r.ts) }),
    facets: {
      [NODE]: (r) => text(r.node),
      [MOUNT]: (r) => text(r.mount),
      [NODE_MOUNT]: (r) => (typeof r.node === 'string' && typeof r.mount === 'string' ? nodeMount(r.node, r.mount) : undefined),
    },
  });
}

/**
 * The same file as seriesLog, as the log a store copy restores into: every
 * record keyed by recordKey (a sample by its identity, another tool's record
 * by its content: its line is read whole while the index is built), no
 * facets. Kept apart from seriesLog so that reads and ingest never pay for
 * reading other tools' lines whole (about four times the index's build time
 * on a log of such lines); a copy builds it on its first page, by one pass
 * over the file, and its index then follows the file as seriesLog's does.
 */
export function restoreLog(dataDir: string, series: SeriesName): RecordLog {
  return new RecordLog({
    ...logOptions(dataDir, series),
    key: (r) => recordKey(series, r),
    whole: (r) => sampleKey(series, r) === undefined,
  });
}

/** What both logs of a series share: the file, its writer lock, the records accepted and the fields the index reads. */
function logOptions(dataDir: string, series: SeriesName) {
  const file = dataPath(dataDir, series);
  const shape = SERIES_RECORDS[series];
  return {
    file,
    lockFile: logLockFile(file),
    accept: acceptOf(series),
    fields: ['node', 'ts', 'mount', ...Object.keys(shape.required), ...Object.keys(shape.optional)],
  };
}

/** The facet filter of a series read, or undefined for every record (no node, no mount). */
export function seriesFacet(where: SeriesFilter | undefined): FacetFilter | undefined {
  const { node, mount } = where ?? {};
  if (node !== undefined && mount !== undefined) return { facet: NODE_MOUNT, value: nodeMount(node, mount) };
  if (node !== undefined) return { facet: NODE, value: node };
  if (mount !== undefined) return { facet: MOUNT, value: mount };
  return undefined;
}

function nodeMount(node: string, mount: string): string {
  return JSON.stringify([node, mount]);
}
