import type { JsonRecord } from './jsonl/parse-record.ts';

// What a record of each series log other tools write is (DESIGN.md section 3;
// docs/data-dir.md): the one definition of its typed fields. The readers
// accept only records that fit it (others are skipped and counted, as lines
// that are not JSON objects are), and the API builds its output schemas of
// these records from it (src/api/schemas.ts, seriesFields), so a record a
// reader accepts is one the output check accepts.

/** The JSON type of a field: a string, a finite number, or an object (not an array, not null). */
export type FieldType = 'string' | 'number' | 'object';

export interface RecordShape {
  /** Fields every record has, with their types. */
  readonly required: Readonly<Record<string, FieldType>>;
  /** Fields a record may lack; when present, of their type. */
  readonly optional: Readonly<Record<string, FieldType>>;
}

export type SeriesLog = 'trends' | 'disk' | 'pulse' | 'builds';

/**
 * The typed fields of each log's records; any other field is free and kept
 * as stored. `ts` of trend points, disk snapshots and pulse entries is
 * passed through whatever it holds (any JSON value); a build's `ts` is a
 * string (the digest's window reads it as a time).
 */
export const SERIES_RECORDS: Readonly<Record<SeriesLog, RecordShape>> = {
  trends: { required: {}, optional: {} },
  disk: { required: {}, optional: { mount: 'string', total_bytes: 'number', used_bytes: 'number', free_bytes: 'number' } },
  pulse: { required: {}, optional: { status: 'string', checks: 'object' } },
  builds: { required: { ts: 'string', project: 'string', status: 'string' }, optional: { duration_s: 'number', ref: 'string', commit: 'string' } },
};

/** Whether `value` is of `type` (an object: a plain JSON object, not an array, not null). */
export function isOfType(value: unknown, type: FieldType): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      // JSON.parse reads 1e999 as Infinity, which is no number a client can be sent.
      return typeof value === 'number' && Number.isFinite(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
  }
}

/** Whether `record` fits `shape`: every required field there and of its type, every optional one present of its type. */
export function fitsShape(shape: RecordShape, record: JsonRecord): boolean {
  for (const name in shape.required) if (!Object.hasOwn(record, name) || !isOfType(record[name], shape.required[name] as FieldType)) return false;
  for (const name in shape.optional) if (Object.hasOwn(record, name) && !isOfType(record[name], shape.optional[name] as FieldType)) return false;
  return true;
}

/** Each log's `accept`, made once (the shared tail of a log is remembered per accept). */
const ACCEPTS = Object.fromEntries(
  Object.entries(SERIES_RECORDS).map(([log, shape]) => [log, (record: JsonRecord) => fitsShape(shape, record)]),
) as Record<SeriesLog, (record: JsonRecord) => boolean>;

/**
 * Whether a record is one of `log`'s: a JSON object that is not is skipped
 * and counted by every reader of the log, never answered.
 *
 * @example
 *   acceptOf('disk')({ mount: '/', used_bytes: 'lots' }) // false
 */
export function acceptOf(log: SeriesLog): (record: JsonRecord) => boolean {
  return ACCEPTS[log];
}
