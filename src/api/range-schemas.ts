import { z } from 'zod';
import { rangeBoundMs } from '../core/rollups/range-time.ts';
import type { RangeQuery } from '../core/rollups/range-types.ts';
import { validationError, type ValidationIssue } from '../errors.ts';
import { describedPattern } from './pattern-text.ts';
import { dateTime, nodeParam } from './schemas.ts';

// The range routes' query and answer (DESIGN.md 7b), shared by /trends/range and /disk/range.

const BOUND = describedPattern(
  /^(?:\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})|[1-9]\d{0,6}[smhd])$/,
  'an RFC 3339 date-time (2026-11-21T13:05:00Z) or a duration back from now (90m, 7d)',
);
const FIELDS = describedPattern(/^[A-Za-z0-9_]+(?:,[A-Za-z0-9_]+)*$/, 'field names separated by commas, each of letters, digits and _');

const bound = (description: string) => z.string().max(40).regex(BOUND).optional().meta({ description, examples: ['2026-11-21T00:00:00Z', '7d'] });

/** The query of a range route; `extra` adds a route's own filters (disk: `mount`). */
export function rangeQuery<S extends z.core.$ZodLooseShape>(what: string, extra: S) {
  return z.object({
    from: bound('The range\'s start (inclusive): an RFC 3339 date-time, or a duration back from now such as `7d` or `90m`. Default: 24 hours before `to`.'),
    to: bound('The range\'s end (exclusive): an RFC 3339 date-time, or a duration back from now. Default: now.'),
    points: z.int().min(1).max(2000).default(300).meta({ description: 'At most this many buckets (1–2000); the step is the smallest nice one (1, 2, 5, 10, 15, 30 s; 1, 2, 5, 10, 15, 30 min; 1, 2, 3, 6, 12 h; 1, 2, 5, 10… days) that fits.' }),
    node: nodeParam(what),
    fields: z.string().max(2000).regex(FIELDS).optional().meta({ description: 'Only these numeric fields, comma-separated (`cpu_pct,load1`). Default: every numeric field the range holds.', examples: ['cpu_pct,mem_used_pct'] }),
    ...extra,
  });
}

const byField = (what: string) => z.record(z.string(), z.number()).meta({ description: `Per numeric field: the ${what} of the samples of the bucket that hold it.` });

/** The answer of a range route; `id` names it in the OpenAPI document. */
export function rangeAnswer(id: string) {
  return z
    .object({
      from: dateTime('The range\'s start (inclusive), RFC 3339 UTC.'),
      to: dateTime('The range\'s end (exclusive), RFC 3339 UTC.'),
      step_s: z.int().min(1).meta({ description: 'Each bucket\'s width in seconds; buckets are aligned to the epoch.' }),
      tier: z.enum(['raw', '1m', '1h']).meta({ description: 'What answered: the raw records, or the rollup of 1-minute or 1-hour buckets (whose first and last buckets may cover samples just outside the range).' }),
      items: z.array(
        z
          .object({
            ts: dateTime('The bucket\'s start.'),
            count: z.int().min(1).meta({ description: 'The raw samples the bucket sums up.' }),
            min: byField('least value'),
            mean: byField('mean'),
            max: byField('greatest value'),
          })
          .meta({ id: 'RangeBucket' }),
      ).meta({ description: 'At most `points` buckets, oldest first; empty buckets are left out.' }),
    })
    .meta({ id });
}

/**
 * The store's query from a range route's input, `nowMs` "now": 422 (as the
 * schema's own issues) for a time that is no date (a 30 February) or a
 * `from` after `to`.
 */
export function rangeQueryOf(input: { from?: string; to?: string; points: number; node?: string; fields?: string; mount?: string }, nowMs: number): RangeQuery {
  const issues: ValidationIssue[] = [];
  const read = (name: 'from' | 'to', text: string | undefined, fallback: () => number): number => {
    if (text === undefined) return fallback();
    const ms = rangeBoundMs(text, nowMs);
    if (ms === undefined) issues.push({ loc: ['query', name], msg: 'Input should be a valid datetime, invalid date', type: 'datetime_from_date_parsing' });
    return ms ?? Number.NaN;
  };
  const toMs = read('to', input.to, () => nowMs);
  const fromMs = read('from', input.from, () => toMs - 86_400_000);
  if (!issues.length && fromMs > toMs) issues.push({ loc: ['query', 'from'], msg: 'Value error, from must not be after to', type: 'value_error' });
  if (issues.length) throw validationError(issues);
  return {
    fromMs,
    toMs,
    points: input.points,
    nowMs,
    ...(input.node === undefined ? {} : { node: input.node }),
    ...(input.mount === undefined ? {} : { mount: input.mount }),
    ...(input.fields === undefined ? {} : { fields: [...new Set(input.fields.split(','))] }),
  };
}
