import { z } from 'zod';
import { buildDigest, MAX_RECENT_FAILURES } from '../../core/builds.ts';
import { DATA_FILES } from '../../core/data-files.ts';
import { defineOperation } from '../define-operation.ts';
import { dateTime, storedTime } from '../schemas.ts';

const counts = {
  total: z.int(),
  success: z.int(),
  failure: z.int(),
  cancelled: z.int(),
  success_rate: z.number().nullable().meta({ description: 'success / (success + failure); null without a finished build.' }),
};

const digest = z.object({
  days: z.int(),
  since: dateTime('Start of the window (now minus `days`), UTC.'),
  until: dateTime('End of the window (now), UTC.'),
  ...counts,
  by_project: z.array(
    z.object({
      project: z.string(),
      ...counts,
      last_status: z.string(),
      last_ts: storedTime('When the project\'s newest build ran, as the build log has it'),
      avg_duration_s: z.number().nullable(),
    }),
  ),
  recent_failures: z
    .array(
      z.object({
        ts: storedTime('When the build finished, as the build log has it'),
        project: z.string(),
        ref: z.string().optional(),
        commit: z.string().optional(),
        duration_s: z.number().optional(),
      }),
    )
    .meta({ description: `The window's newest failed builds (at most ${MAX_RECENT_FAILURES}), newest first.` }),
  skipped_lines: z.int(),
}).meta({ id: 'BuildDigest' });

export const buildsDigest = defineOperation({
  id: 'builds.digest',
  method: 'GET',
  path: '/builds',
  access: 'protected',
  tag: 'builds',
  summary: 'Build digest for the last N days: totals and success rate, overall and by project',
  description: 'Counts the builds of the build log that ran in the last `days` days, overall and by project, with each project\'s last status and average duration, and lists the newest failures.',
  input: { query: z.object({ days: z.int().min(1).max(365).default(7).meta({ description: 'Window in days (1–365).' }) }) },
  output: digest,
  // The window moves with the clock; the tag follows the builds in it.
  volatile: ['since', 'until'],
  handler: ({ ctx, input }) => buildDigest(ctx.dataDir, input.query.days, ctx.now()),
  cli: { command: 'builds', watch: [DATA_FILES.builds], examples: ['estate builds --days 30'] },
});

export const buildsRecent = defineOperation({
  id: 'builds.recent',
  method: 'GET',
  path: '/builds/recent',
  access: 'protected',
  tag: 'builds',
  summary: 'Build digest for the last 7 days',
  description: 'The same digest as `GET /builds?days=7`.',
  output: digest,
  volatile: ['since', 'until'],
  handler: ({ ctx }) => buildDigest(ctx.dataDir, 7, ctx.now()),
  cli: { command: 'builds recent', watch: [DATA_FILES.builds], examples: ['estate builds recent'] },
});
