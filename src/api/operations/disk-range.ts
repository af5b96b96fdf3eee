import { z } from 'zod';
import { DATA_FILES } from '../../core/data-files.ts';
import { defineOperation } from '../define-operation.ts';
import { rangeAnswer, rangeQuery, rangeQueryOf } from '../range-schemas.ts';

// Its own module: a command line loads only its operation's module, so `estate disk` builds none of these schemas.

export const diskRange = defineOperation({
  id: 'disk.range',
  method: 'GET',
  path: '/disk/range',
  access: 'protected',
  tag: 'disk',
  summary: 'Disk snapshots over a time range: min, mean and max per bucket',
  description:
    'The disk snapshots of `[from, to)` (of every node and mount, or of `node`, of `mount`, or of both) in at most `points` buckets of `step_s` seconds aligned to the epoch, oldest first, empty buckets left out: per bucket the snapshots counted and the min, mean and max of each numeric field (or of `fields`). `tier` says what answered: the raw snapshots, or the 1-minute or 1-hour rollups (per node and mount) kept beside them. 422 as for `/trends/range`.',
  input: { query: rangeQuery('snapshots', { mount: z.string().min(1).max(4096).optional().meta({ description: 'Only the snapshots of this mount point.' }) }) },
  output: rangeAnswer('DiskRange'),
  handler: ({ ctx, input }) => ctx.store.series.range('disk', rangeQueryOf(input.query, Date.now())),
  cli: {
    command: 'disk range',
    watch: [DATA_FILES.disk],
    columns: ['ts', 'count', 'mean', 'min', 'max'],
    examples: ['estate disk range --mount / --from 30d --fields used_bytes', 'estate disk range --node web-1 --mount /srv --from 24h --json'],
  },
});
