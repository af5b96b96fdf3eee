import { z } from 'zod';
import { nodeName } from '../../config.ts';
import { estateStatus } from '../../core/estate-status.ts';
import { defineOperation } from '../define-operation.ts';
import { dateTime, nodeNameField } from '../schemas.ts';
import { nodeRuntimeSchema } from './agents.ts';

export const estateStatusGet = defineOperation({
  id: 'estate.status',
  method: 'GET',
  path: '/estate/status',
  access: 'public',
  tag: 'estate',
  summary: 'System status and uptime for the estate node card',
  description: '`status` is `degraded` when the newest health pulse is degraded or unhealthy (or cannot be read).',
  output: z.object({
    node: nodeNameField(),
    status: z.enum(['ok', 'degraded']),
    pulse: z.enum(['healthy', 'degraded', 'unhealthy', 'unknown']),
    version: z.string(),
    started_at: dateTime('When this server process started, UTC.'),
    uptime_s: z.int(),
    last_activity: dateTime('When an agent last completed a task (the newest completion\'s `completed_at`), UTC.').nullable(),
    runtime: nodeRuntimeSchema,
    errors: z.array(z.string()),
  }).meta({ id: 'EstateStatus', description: 'The node card: status, version, uptime, last activity and live runtime.' }),
  volatile: ['uptime_s', 'runtime'],
  handler: ({ ctx }) => estateStatus({ series: ctx.store.series, completions: ctx.store.completions, nodeName: nodeName(ctx.config), startedAt: ctx.startedAt, now: ctx.now() }),
  cli: { command: 'status', examples: ['estate status', 'estate status --url http://hub:8080'] },
});
