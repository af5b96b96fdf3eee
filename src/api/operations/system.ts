import { z } from 'zod';
import { nodeName } from '../../config.ts';
import { dataDirReadiness } from '../../core/data-dir-readiness.ts';
import { diskUsage } from '../../core/disk-usage.ts';
import { EstateError } from '../../errors.ts';
import { pulseStatus } from '../../core/pulse.ts';
import { VERSION } from '../../version.ts';
import { defineOperation } from '../define-operation.ts';
import { dateTime, nodeNameField } from '../schemas.ts';

export const apiRoot = defineOperation({
  id: 'system.root',
  method: 'GET',
  path: '/',
  access: 'public',
  unavailable: 'never',
  tag: 'system',
  summary: 'API metadata',
  description: 'The service\'s name, version and node name, and where its dashboard, documentation and OpenAPI document are. A browser asking for HTML (`Accept: text/html`) is redirected to the dashboard; the answer says `Vary: Accept`.',
  output: z.object({
    name: z.literal('estate'),
    version: z.string(),
    node: nodeNameField(),
    dashboard: z.string().meta({ description: 'The dashboard page (a browser asking `/` for HTML is redirected there).' }),
    docs: z.string(),
    redoc: z.string(),
    openapi: z.string(),
  }).meta({ id: 'ApiInfo' }),
  handler: ({ ctx }) => ({
    name: 'estate' as const,
    version: VERSION,
    node: nodeName(ctx.config),
    dashboard: '/dashboard',
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
  unavailable: 'never',
  tag: 'system',
  summary: 'Liveness check: 200 whenever the service runs',
  description: 'Reads nothing and is never rate-limited, so a load balancer\'s probe cannot fail because of other clients.',
  rateLimited: false,
  output: z.object({ status: z.literal('ok') }).meta({ id: 'Liveness', description: 'Always `{"status":"ok"}` while the process runs.' }),
  handler: () => ({ status: 'ok' as const }),
  cli: { command: 'healthz', examples: ['estate healthz --url http://hub:8080'] },
});

/** Seconds a balancer or orchestrator is told to wait before asking /readyz again. */
const READY_RETRY_AFTER_S = 5;

export const readyz = defineOperation({
  id: 'system.readyz',
  method: 'GET',
  path: '/readyz',
  access: 'public',
  unavailable: 'retry-after',
  tag: 'system',
  summary: 'Readiness check: 200 when the data dir can be read and written and the store answers',
  description:
    'Lists the data dir, writes, syncs and removes a probe file in it, and reads the credential store (keys.json, or the ' +
    'PostgreSQL store\'s keys). With a PostgreSQL store it also checks that the database answers, within a bounded time, ' +
    'at the schema version this estate needs (`store`). 503 (with `Retry-After`) names the check that failed and its error ' +
    'code (a full disk is `ENOSPC`, a read-only mount `EROFS`, a credential store that does not parse `corrupt`, a database ' +
    'that is down `connection refused`), and the store by its URL without a password.',
  output: z.object({
    status: z.literal('ready'),
    checks: z.object({
      data_dir_readable: z.literal('ok'),
      data_dir_writable: z.literal('ok'),
      credential_store: z.literal('ok'),
      /** Present with a store other than the data dir (e.g. PostgreSQL). */
      store: z.literal('ok').optional(),
    }),
  }).meta({ id: 'Readiness' }),
  errors: [503],
  handler: async ({ ctx }) => {
    const checks = await dataDirReadiness(ctx.dataDir, ctx.store);
    const failed = Object.entries(checks).filter(([, result]) => result !== 'ok' && result !== 'skipped');
    const where = ctx.store.kind === 'data-dir' ? '' : ` (store ${ctx.store.describe()})`;
    if (failed.length) {
      const detail = `not ready: ${failed.map(([name, result]) => `${name} failed (${result})`).join(', ')}${where}`;
      throw new EstateError('unavailable', detail, { headers: { 'Retry-After': String(READY_RETRY_AFTER_S) } });
    }
    const store = checks.store === undefined ? {} : { store: 'ok' as const };
    return { status: 'ready' as const, checks: { data_dir_readable: 'ok' as const, data_dir_writable: 'ok' as const, credential_store: 'ok' as const, ...store } };
  },
  cli: { command: 'readyz', examples: ['estate readyz', 'estate readyz --url http://hub:8080'] },
});

/** The data dir's file system; where the data dir is stays private (a public route must not map the host). */
const usage = z.object({
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
    node: nodeNameField(),
    started_at: dateTime('When this server process started, UTC.'),
    uptime_s: z.number(),
    pulse: z.enum(['healthy', 'degraded', 'unhealthy', 'unknown']),
    disk: usage,
  }).meta({ id: 'Health' }),
  handler: async ({ ctx }) => {
    const [disk, pulse] = await Promise.all([diskUsage(ctx.dataDir), pulseStatus(ctx.store.series)]);
    const degraded = disk.used_pct > DISK_DEGRADED_PCT || pulse === 'degraded' || pulse === 'unhealthy';
    return {
      status: degraded ? ('degraded' as const) : ('ok' as const),
      version: VERSION,
      node: nodeName(ctx.config),
      started_at: ctx.startedAt.toISOString(),
      uptime_s: Math.round((ctx.now().getTime() - ctx.startedAt.getTime()) / 1000),
      pulse,
      disk,
    };
  },
  cli: { command: 'health', examples: ['estate health'] },
});
