import { z } from 'zod';

// Schemas shared by many operations. Every list answer has one shape:
// `{"items": [...], "count": N, ...meta}`, newest first.

/** A record of a log, returned as stored (only its documented fields are named). */
export function storedRecord<S extends z.core.$ZodLooseShape>(shape: S, description: string) {
  return z.looseObject(shape).meta({ description });
}

export const anyRecord = z.looseObject({}).meta({ description: 'A JSON object, returned as stored.' });

export function page<T extends z.ZodType>(item: T) {
  return z.object({
    items: z.array(item),
    count: z.int().min(0),
    limit: z.int().min(1),
    skipped_lines: z.int().min(0).meta({ description: 'Lines passed over while reading this page because they were not JSON objects.' }),
  });
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

export const isoTime = z.string().meta({ description: 'ISO 8601 time, UTC.', examples: ['2026-11-21T13:05:00.000Z'] });

export const noInput = z.object({});
