import { z } from 'zod';
import { EstateError } from '../../errors.ts';
import { DATA_FILES } from '../../core/data-files.ts';
import { defineOperation } from '../define-operation.ts';
import { limitParam, nodeParam, page, storedRecord, storedTime } from '../schemas.ts';

const trendPoint = storedRecord({ ts: storedTime('When the point was taken', 'any').optional() }, 'A trend data point: `ts` plus free fields, as stored.').meta({ id: 'TrendPoint' });

export const trendsList = defineOperation({
  id: 'trends.list',
  method: 'GET',
  path: '/trends',
  access: 'protected',
  tag: 'trends',
  summary: 'The latest N trend data points, newest first',
  description: 'The newest `limit` trend points, of every node (newest first, as written) or only of `node`; lines that are not JSON objects are skipped and counted in `skipped_lines`.',
  input: { query: z.object({ limit: limitParam(100, 1000, 'points'), node: nodeParam('points') }) },
  output: page(trendPoint, 'TrendPointPage'),
  handler: ({ ctx, input }) => ctx.store.series.newest('trends', input.query.limit, { node: input.query.node }),
  cli: { command: 'trends', watch: [DATA_FILES.trends], examples: ['estate trends --limit 20', 'estate trends --node web-1 --limit 10', 'estate trends --json | jq ".items[0]"', 'estate trends --limit 5 --watch'] },
});

export const trendsLatest = defineOperation({
  id: 'trends.latest',
  method: 'GET',
  path: '/trends/latest',
  access: 'protected',
  tag: 'trends',
  summary: 'The single most recent trend data point',
  description: 'The newest trend point (of `node` when given); 404 when there is none.',
  input: { query: z.object({ node: nodeParam('points') }) },
  output: trendPoint,
  errors: [404],
  handler: async ({ ctx, input }) => {
    const [latest] = (await ctx.store.series.newest('trends', 1, { node: input.query.node })).items;
    if (!latest) throw new EstateError('not_found', input.query.node ? `no trend data of ${input.query.node} yet` : 'no trend data yet');
    return latest;
  },
  cli: { command: 'trends latest', watch: [DATA_FILES.trends], examples: ['estate trends latest'] },
});
