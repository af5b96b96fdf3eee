import { randomBytes } from 'node:crypto';
import { EstateError } from '../errors.ts';
import { dataPath, type DataFile } from './data-files.ts';
import type { JsonRecord } from './jsonl/parse-record.ts';
import { RecordLog, type AppendResult } from './record-log.ts';
import type { RestoreResult } from './store/store.ts';

/**
 * One kind of record that clients write once per key (work completions,
 * published entries): the fields a client supplies, the id and time the
 * service adds, and what the log is looked up by.
 */
export interface KeyedLogSpec {
  file: DataFile;
  /** The client's fields, in stored order; an identical replay has equal values for each. */
  fields: readonly string[];
  /** The client's fields that must be present (strings) for a line to count as a record. */
  required: readonly string[];
  /** The two client fields that identify a record: the same key twice is a replay or a conflict. */
  key: readonly [string, string];
  /** The id the service adds (stored first): field name and prefix, followed by 16 hex digits. */
  id: { field: string; prefix: string };
  /** The time the service adds (stored after the client's fields), ISO 8601 UTC. */
  time: string;
  /** Fields the service may add after the time (WriteExtra), in stored order. */
  extra?: readonly string[];
  /** Client fields the log is also looked up by (the id always is). */
  facets: readonly string[];
  /** How `KeyedRecords.tally` groups: by one client field, with the distinct values of another per group. */
  tally?: { by: string; distinct: string };
}

export interface KeyedWriteResult extends AppendResult {
  /** For a conflict: the client fields whose values differ from the stored record's. */
  differing: string[];
}

/** The log of `spec` in a data dir, indexed by key, by id and by each facet. */
export function keyedLog(dataDir: string, spec: KeyedLogSpec): RecordLog {
  return new RecordLog({
    file: dataPath(dataDir, spec.file),
    accept: (r) => isKeyedRecord(spec, r),
    key: (r) => keyOf(spec, r),
    facets: Object.fromEntries(spec.facets.map((f) => [f, (r: JsonRecord) => r[f] as string])),
    // One id per record: indexed by hash, not as a string per record.
    uniqueFacets: { [spec.id.field]: (r: JsonRecord) => r[spec.id.field] as string },
    tally: {
      time: (r) => (typeof r[spec.time] === 'string' ? Date.parse(r[spec.time] as string) : Number.NaN),
      ...(spec.tally ? { by: textField(spec.tally.by), distinct: textField(spec.tally.distinct) } : {}),
    },
    // Every field the functions above read: the index reads only these from each line.
    fields: [spec.id.field, spec.time, ...spec.required, ...spec.key, ...spec.facets, ...(spec.tally ? [spec.tally.by, spec.tally.distinct] : [])],
  });
}

function textField(name: string): (record: JsonRecord) => string | undefined {
  return (r) => (typeof r[name] === 'string' && r[name] !== '' ? (r[name] as string) : undefined);
}

/**
 * Stores `input` once per key: `created` when new (on disk when this
 * resolves), `replayed` when the same fields were stored before (nothing
 * written), `conflict` when other fields were (with the stored record and
 * the fields that differ). Absent and null optional fields are the same.
 */
export async function writeKeyed(log: RecordLog, spec: KeyedLogSpec, input: object, now: () => Date, extra?: WriteExtra): Promise<KeyedWriteResult> {
  const fields = pick(input, spec.fields);
  const result = await log.append({
    key: keyOf(spec, fields),
    same: (stored) => differing(stored, fields, spec.fields).length === 0,
    create: () => newKeyedRecord(spec, fields, now, extra),
  });
  return { ...result, differing: result.outcome === 'conflict' ? differing(result.record, fields, spec.fields) : [] };
}

/**
 * Fields the service adds to a new record after its time, given that time
 * (a completion's `started_at` and `duration_s`); not compared on a replay.
 */
export type WriteExtra = (time: Date) => JsonRecord;

/** A new record of `spec`: a fresh id first, the client's `fields`, the time, then `extra`'s fields. */
export function newKeyedRecord(spec: KeyedLogSpec, fields: JsonRecord, now: () => Date, extra?: WriteExtra): JsonRecord {
  const time = now();
  return { [spec.id.field]: `${spec.id.prefix}${randomBytes(8).toString('hex')}`, ...fields, [spec.time]: time.toISOString(), ...extra?.(time) };
}

/**
 * Stores records made elsewhere with their own id and time, in order, each
 * once (KeyedRecords.restore): `created`, `present` (an equal record holds
 * its key) or `conflict` (another record holds its key or its id).
 */
export async function restoreKeyed(log: RecordLog, spec: KeyedLogSpec, records: readonly JsonRecord[]): Promise<RestoreResult<JsonRecord>[]> {
  records.forEach((r) => assertRestorable(spec, r));
  const results = await Promise.all(
    records.map((record) =>
      log.append({
        key: keyOf(spec, record),
        same: (stored) => recordDifferences(stored, record).length === 0,
        create: () => record,
        unique: { facet: spec.id.field, value: record[spec.id.field] as string },
      }),
    ),
  );
  return results.map((r) => ({ outcome: r.outcome === 'replayed' ? 'present' : r.outcome, stored: r.record }));
}

/** Whether `record` counts as one of the log's: its id, time and required fields are strings. */
export function isKeyedRecord(spec: KeyedLogSpec, record: JsonRecord): boolean {
  return typeof record[spec.id.field] === 'string' && typeof record[spec.time] === 'string' && spec.required.every((f) => typeof record[f] === 'string');
}

/** Throws a `validation` error unless `record` is one of the log's (isKeyedRecord). */
export function assertRestorable(spec: KeyedLogSpec, record: JsonRecord): void {
  if (isKeyedRecord(spec, record)) return;
  const missing = [spec.id.field, spec.time, ...spec.required].filter((f) => typeof record[f] !== 'string');
  throw new EstateError('validation', `not a record of ${spec.file}: ${missing.join(', ')} must be strings`);
}

/** The fields whose values differ between two records, in `a`'s order then `b`'s (absent and null are the same). */
export function recordDifferences(a: JsonRecord, b: JsonRecord): string[] {
  const fields = [...new Set([...Object.keys(a), ...Object.keys(b)])];
  return fields.filter((f) => canonicalJson(a[f] ?? null) !== canonicalJson(b[f] ?? null));
}

/** JSON with object keys sorted, so equal values compare equal whatever their key order (jsonb keeps none). */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The key `record` is stored under: its `spec.key` fields' values. */
export function keyOf(spec: KeyedLogSpec, record: JsonRecord): string {
  return JSON.stringify(spec.key.map((f) => record[f]));
}

/** `fields` of `input` in that order, leaving out undefined and null (an absent optional field). */
export function pick(input: object, fields: readonly string[]): JsonRecord {
  const out: JsonRecord = {};
  const values = input as Record<string, unknown>;
  for (const f of fields) if (values[f] !== undefined && values[f] !== null) out[f] = values[f];
  return out;
}

/** The `fields` whose values differ between `a` and `b` (absent and null are the same). */
export function differing(a: JsonRecord, b: JsonRecord, fields: readonly string[]): string[] {
  return fields.filter((f) => (a[f] ?? null) !== (b[f] ?? null));
}
