import { z } from 'zod';
import { latestRecord, recentRecords } from '../../core/recent-records.ts';
import { EstateError } from '../../errors.ts';
import { DATA_FILES } from '../../core/data-files.ts';
import { defineOperation } from '../define-operation.ts';
import { limitParam, page, storedRecord, storedTime } from '../schemas.ts';

const trendPoint = storedRecord({ ts: storedTime('When the point was taken', 'any').optional() }, 'A trend data point: `ts` plus free fields, as stored.').meta({ id: 'TrendPoint' });

export const trendsList = defineOperation({
  id: 'trends.list',
  method: 'GET',
  path: '/trends',
  access: 'protected',
  tag: 'trends',
  summary: 'The latest N trend data points, newest first',
  description: 'Reads the newest `limit` lines of the trend log; lines that are not JSON objects are skipped and counted in `skipped_lines`.',
  input: { query: z.object({ limit: limitParam(100, 1000, 'points') }) },
  output: page(trendPoint, 'TrendPointPage'),
  handler: ({ ctx, input }) => recentRecords(ctx.dataDir, 'trends', input.query.limit),
  cli: { command: 'trends', watch: [DATA_FILES.trends], examples: ['estate trends --limit 20', 'estate trends --json | jq ".items[0]"', 'estate trends --limit 5 --watch'] },
});

export const trendsLatest = defineOperation({
  id: 'trends.latest',
  method: 'GET',
  path: '/trends/latest',
  access: 'protected',
  tag: 'trends',
  summary: 'The single most recent trend data point',
  description: 'The last JSON object of the trend log; 404 while the log is empty or missing.',
  output: trendPoint,
  errors: [404],
  handler: async ({ ctx }) => {
    const latest = await latestRecord(ctx.dataDir, 'trends');
    if (!latest) throw new EstateError('not_found', 'no trend data yet');
    return latest;
  },
  cli: { command: 'trends latest', watch: [DATA_FILES.trends], examples: ['estate trends latest'] },
});
