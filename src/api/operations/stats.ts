import { z } from 'zod';
import { siteStats } from '../../core/stats.ts';
import { defineOperation } from '../define-operation.ts';
import { dateTime } from '../schemas.ts';

export const statsGet = defineOperation({
  id: 'stats.get',
  expensive: true,
  method: 'GET',
  path: '/stats',
  access: 'protected',
  tag: 'stats',
  summary: 'Site statistics, produced by the configured statistics command',
  description:
    'Runs `stats.command` (argv, no shell; cached for `stats.cache_s` seconds) and returns its JSON output as `data`. ' +
    '503 when not configured; 502 when it fails or prints something that is not JSON; 504 when it runs past `stats.timeout_ms` (it is killed).',
  output: z.object({
    data: z.unknown().meta({ description: 'What the command printed, parsed as JSON.' }),
    ran_at: dateTime('When the command ran (the cached answer\'s time when it comes from the cache), UTC.'),
    duration_ms: z.int(),
  }).meta({ id: 'StatsResult', description: 'The statistics command\'s output and when it ran.' }),
  errors: [502, 503, 504],
  // A dashboard polling unchanged statistics gets 304s, though the command ran again.
  volatile: ['ran_at', 'duration_ms'],
  handler: ({ ctx }) => siteStats(ctx),
  cli: { command: 'stats', progress: 'running the statistics command…', examples: ['estate stats', 'estate stats --json | jq .data'] },
});
