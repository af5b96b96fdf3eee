import { z } from 'zod';
import { DATA_FILES } from '../../core/data-files.ts';
import { pulseStatus } from '../../core/pulse.ts';
import { recentRecords } from '../../core/recent-records.ts';
import { SERIES_RECORDS } from '../../core/series-records.ts';
import { defineOperation } from '../define-operation.ts';
import { limitParam, page, seriesFields, storedRecord, storedTime } from '../schemas.ts';

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
  description: 'The newest `limit` entries of the pulse log, each with its `status` and `checks` as stored; lines that are not JSON objects, or not pulse entries (a `status` that is not a string, `checks` that is not an object), are skipped and counted in `skipped_lines`.',
  input: { query: z.object({ limit: limitParam(100, 1000, 'entries') }) },
  output: page(pulseEntry, 'PulseEntryPage'),
  handler: ({ ctx, input }) => recentRecords(ctx.dataDir, 'pulse', input.query.limit),
  cli: { command: 'pulse', watch: [DATA_FILES.pulse], columns: ['ts', 'status', 'checks'], examples: ['estate pulse --limit 10'] },
});

export const pulseStatusOp = defineOperation({
  id: 'pulse.status',
  method: 'GET',
  path: '/health/pulse/status',
  access: 'protected',
  tag: 'health',
  summary: 'The overall health status as a JSON string',
  description: 'The status of the newest pulse entry (lines that are not pulse entries are passed over); `"unknown"` when there is none or its status is not one of the three.',
  output: z.enum(['healthy', 'degraded', 'unhealthy', 'unknown']).meta({ id: 'PulseStatus' }),
  handler: ({ ctx }) => pulseStatus(ctx.dataDir),
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
