import { z } from 'zod';
import { diskUsage } from '../../core/disk-usage.ts';
import { pulseStatus } from '../../core/pulse.ts';
import { VERSION } from '../../version.ts';
import { defineOperation } from '../define-operation.ts';

export const apiRoot = defineOperation({
  id: 'system.root',
  method: 'GET',
  path: '/',
  access: 'public',
  tag: 'system',
  summary: 'API metadata',
  output: z.object({
    name: z.literal('estate'),
    version: z.string(),
    node: z.string(),
    docs: z.string(),
    redoc: z.string(),
    openapi: z.string(),
  }),
  handler: ({ ctx }) => ({
    name: 'estate' as const,
    version: VERSION,
    node: ctx.config.node_name ?? 'estate',
    docs: '/api/docs',
    redoc: '/api/redoc',
    openapi: '/api/openapi.json',
  }),
  cli: { command: 'info', examples: ['estate info', 'estate info --json'] },
});

export const healthz = defineOperation({
  id: 'system.healthz',
  method: 'GET',
  path: '/healthz',
  access: 'public',
  tag: 'system',
  summary: 'Liveness check: 200 whenever the service runs',
  output: z.object({ status: z.literal('ok') }),
  handler: () => ({ status: 'ok' as const }),
  cli: { command: 'healthz', examples: ['estate healthz --url http://hub:8080'] },
});

const usage = z.object({
  path: z.string(),
  total_bytes: z.number(),
  used_bytes: z.number(),
  free_bytes: z.number(),
  used_pct: z.number(),
});

/** Above this share of the data dir's file system in use, /health says `degraded`. */
const DISK_DEGRADED_PCT = 90;

export const health = defineOperation({
  id: 'system.health',
  method: 'GET',
  path: '/health',
  access: 'public',
  tag: 'system',
  summary: 'Live health: status, uptime, version and disk usage of the data dir',
  description: '`status` is `degraded` when the newest health pulse is not healthy or the data dir\'s file system is over 90% full.',
  output: z.object({
    status: z.enum(['ok', 'degraded']),
    version: z.string(),
    node: z.string(),
    started_at: z.string(),
    uptime_s: z.number(),
    pulse: z.enum(['healthy', 'degraded', 'unhealthy', 'unknown']),
    disk: usage,
  }),
  handler: async ({ ctx }) => {
    const [disk, pulse] = await Promise.all([diskUsage(ctx.dataDir), pulseStatus(ctx.dataDir)]);
    const degraded = disk.used_pct > DISK_DEGRADED_PCT || pulse === 'degraded' || pulse === 'unhealthy';
    return {
      status: degraded ? ('degraded' as const) : ('ok' as const),
      version: VERSION,
      node: ctx.config.node_name ?? 'estate',
      started_at: ctx.startedAt.toISOString(),
      uptime_s: Math.round((ctx.now().getTime() - ctx.startedAt.getTime()) / 1000),
      pulse,
      disk,
    };
  },
  cli: { command: 'health', examples: ['estate health'] },
});
