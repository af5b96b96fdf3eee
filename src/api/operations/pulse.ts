import { z } from 'zod';
import { DATA_FILES } from '../../core/data-files.ts';
import { pulseStatus } from '../../core/pulse.ts';
import { SERIES_RECORDS } from '../../core/series-records.ts';
import { defineOperation } from '../define-operation.ts';
import { limitParam, nodeParam, page, seriesFields, storedRecord, storedTime } from '../schemas.ts';

const pulseEntry = storedRecord(
  { ts: storedTime('When the pulse was taken', 'any').optional(), ...seriesFields(SERIES_RECORDS.pulse) },
  'A health pulse entry, as stored.',
).meta({ id: 'PulseEntry' });

export const pulseList = defineOperation({
  id: 'pulse.list',
  method: 'GET',
  path: '/health/pulse',
  access: 'protected',
  tag: 'health',
  summary: 'Entries of the health pulse log, newest first',
  description: 'The newest `limit` entries of the pulse log (of every node, newest first as written, or only of `node`), each with its `status` and `checks` as stored; lines that are not JSON objects, or not pulse entries (a `status` that is not a string, `checks` that is not an object), are skipped and counted in `skipped_lines`.',
  input: { query: z.object({ limit: limitParam(100, 1000, 'entries'), node: nodeParam('entries') }) },
  output: page(pulseEntry, 'PulseEntryPage'),
  handler: ({ ctx, input }) => ctx.store.series.newest('pulse', input.query.limit, { node: input.query.node }),
  cli: { command: 'pulse', watch: [DATA_FILES.pulse], columns: ['ts', 'status', 'checks'], examples: ['estate pulse --limit 10', 'estate pulse --node web-1'] },
});

export const pulseStatusOp = defineOperation({
  id: 'pulse.status',
  method: 'GET',
  path: '/health/pulse/status',
  access: 'protected',
  tag: 'health',
  summary: 'The overall health status as a JSON string',
  description: 'The status of the newest pulse entry (of `node` when given; lines that are not pulse entries are passed over); `"unknown"` when there is none or its status is not one of the three.',
  input: { query: z.object({ node: nodeParam('entries') }) },
  output: z.enum(['healthy', 'degraded', 'unhealthy', 'unknown']).meta({ id: 'PulseStatus' }),
  handler: ({ ctx, input }) => pulseStatus(ctx.store.series, input.query.node),
  cli: {
    command: 'pulse status',
    watch: [DATA_FILES.pulse],
    // The Nagios plugin codes, so `estate pulse status` is a ready-made check (README, "Exit status").
    exitCodes: { healthy: 0, degraded: 1, unhealthy: 2, unknown: 3 },
    // As the monitoring plugins do: a check that cannot be made is UNKNOWN, whatever the error.
    errorExitCode: 3,
    examples: ['estate pulse status', 'estate pulse status >/dev/null || echo "estate needs a look"', 'estate pulse status --watch'],
  },
});
