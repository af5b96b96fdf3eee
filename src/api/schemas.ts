import { z } from 'zod';
import type { FieldType, RecordShape } from '../core/series-records.ts';

// Schemas shared by many operations. Every list answer has one shape:
// `{"items": [...], "count": N, ...meta}`, newest first.

/** A record of a log, returned as stored (only its documented fields are named). */
export function storedRecord<S extends z.core.$ZodLooseShape>(shape: S, description: string) {
  return z.looseObject(shape).meta({ description });
}

/** The zod schema of each field type of a series record (src/core/series-records.ts, which the readers accept by). */
const FIELD_SCHEMAS: Record<FieldType, () => z.ZodType> = {
  string: () => z.string(),
  number: () => z.number(),
  object: () => z.record(z.string(), z.unknown()),
};

/**
 * The typed fields of a series record as a zod shape, from the one
 * definition its readers accept records by: a record a reader answers is
 * one this shape accepts (test/series-records.test.ts checks they agree).
 */
export function seriesFields(shape: RecordShape): Record<string, z.ZodType> {
  const fields: Record<string, z.ZodType> = {};
  for (const [name, type] of Object.entries(shape.required)) fields[name] = FIELD_SCHEMAS[type]();
  for (const [name, type] of Object.entries(shape.optional)) fields[name] = FIELD_SCHEMAS[type]().optional();
  return fields;
}

export const anyRecord = z.looseObject({}).meta({ description: 'A JSON object, returned as stored.' });

/** A page of `item`; `id` names it in the OpenAPI document (`TrendPointPage`). */
export function page<T extends z.ZodType>(item: T, id?: string) {
  const schema = z.object({
    items: z.array(item),
    count: z.int().min(0),
    limit: z.int().min(1),
    skipped_lines: z.int().min(0).meta({ description: 'Lines passed over while reading this page because they were not JSON objects, or not records of the log (a documented field of the wrong type).' }),
  });
  return id === undefined ? schema : schema.meta({ id });
}

/** A `limit` query parameter: integer in [1, max], with a default. */
export function limitParam(defaultValue: number, max: number, what = 'records') {
  return z
    .int()
    .min(1)
    .max(max)
    .default(defaultValue)
    .meta({ description: `How many ${what} to return (1–${max}).` });
}

/** `?node=NAME` of the series reads (DESIGN.md 7a): only that node's records; every node's, merged newest first, without it. */
export function nodeParam(what: string) {
  return z.string().min(1).max(200).optional().meta({ description: `Only the ${what} of this node (its \`node\` field); every node's, newest first, without it.` });
}

/** A time estate itself produces: always ISO 8601 in UTC, so `format: date-time` (an annotation; the output check does not parse it). */
export function dateTime(description = 'ISO 8601 time, UTC.') {
  return z.string().meta({ format: 'date-time', description, examples: ['2026-11-21T13:05:00.000Z'] });
}

/** This node's name, as every answer that names it gives it. */
export function nodeNameField() {
  return z.string().meta({ description: 'This node\'s name: `node_name` in the config, else the host name.' });
}

/**
 * A time estate passes through from a record it did not write (a log line
 * another tool wrote, the forge's answer): an RFC 3339 date-time when its
 * writer kept to the format, else whatever was stored, returned as it is.
 * Both are in the schema (`anyOf`), so a client knows the format and that it
 * may not hold, and an odd value is never refused as a bad output (a 500).
 * `other` is what else it may be: any string (the default), or any JSON value
 * (`any`, for the fields of records returned whole, as stored).
 */
export function storedTime(what: string, other: 'string' | 'any' = 'string') {
  const raw = (other === 'any' ? z.unknown() : z.string()).meta({ description: `Any other ${other === 'any' ? 'value' : 'text'} its writer stored, returned as it is.` });
  return z.union([z.string().meta({ format: 'date-time' }), raw]).meta({ description: `${what}: ${STORED_NOTE}`, examples: ['2026-11-21T13:05:00.000Z'] });
}

/** What `storedTime` says after its subject. */
export const STORED_NOTE = 'an RFC 3339 date-time when its writer followed the format; estate passes it through without checking it.';

export const noInput = z.object({});
