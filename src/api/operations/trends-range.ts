import { DATA_FILES } from '../../core/data-files.ts';
import { defineOperation } from '../define-operation.ts';
import { rangeAnswer, rangeQuery, rangeQueryOf } from '../range-schemas.ts';

// Its own module: a command line loads only its operation's module, so `estate trends` builds none of these schemas.

export const trendsRange = defineOperation({
  id: 'trends.range',
  method: 'GET',
  path: '/trends/range',
  access: 'protected',
  tag: 'trends',
  summary: 'Trend points over a time range: min, mean and max per bucket',
  description:
    'The trend points of `[from, to)` (of every node, or of `node`) in at most `points` buckets of `step_s` seconds aligned to the epoch, oldest first, empty buckets left out: per bucket the samples counted and the min, mean and max of each numeric field (or of `fields`). `tier` says what answered: the raw points, or the 1-minute or 1-hour rollups kept beside them (with a retention of their own), which also answer a range the raw series no longer holds. 422 for a `from` after `to`, a bad time, `points` out of 1–2000 or a field name that is not letters, digits and `_`.',
  input: { query: rangeQuery('points', {}) },
  output: rangeAnswer('TrendRange'),
  handler: ({ ctx, input }) => ctx.store.series.range('trends', rangeQueryOf(input.query, Date.now())),
  cli: {
    command: 'trends range',
    watch: [DATA_FILES.trends],
    columns: ['ts', 'count', 'mean', 'min', 'max'],
    examples: ['estate trends range --from 7d --points 168 --fields cpu_pct,load1', 'estate trends range --node web-1 --from 2026-11-20T00:00:00Z --to 2026-11-21T00:00:00Z --json'],
  },
});
