import { mcpRoutes } from '../mcp/mcp-route.ts';
import { operationTools } from '../mcp/operation-tools.ts';
import type { EstateContext } from '../api/context.ts';
import { operations } from '../api/operations/index.ts';
import { serveSettings } from '../config.ts';
import { createAuthenticator } from '../core/keys/authenticator.ts';
import { ConcurrencyLimit } from '../core/limit-concurrency.ts';
import { estateReadings } from '../core/metrics/estate-readings.ts';
import type { EstateError } from '../errors.ts';
import { buildOpenApi } from '../api/openapi.ts';
import { docsRoutes, PAGE_ROUTE_DOCS } from './docs-routes.ts';
import { dashboardRoutes } from './dashboard/dashboard-routes.ts';
import { type AuthFailure, createHandler } from './handler.ts';
import { metricsRoute } from './metrics/metrics-route.ts';
import { createServerMetrics } from './metrics/server-metrics.ts';
import { pageRoutes } from './html/page-routes.ts';
import { RateLimiter } from './rate-limit.ts';
import { VERSION } from '../version.ts';
import { redactLogLine } from './redact-log-line.ts';
import { requestId } from './request-id.ts';
import { UnsentBudget } from './unsent-budget.ts';
import { createWorkStream } from './work-stream.ts';

export interface AppOptions {
  envApiKey?: string | undefined;
  log?: (line: Record<string, unknown>) => void;
}

/**
 * The estate HTTP API over one data dir and store, as a `(req, res)` handler.
 * Its `close()` waits for background writes; call it after the server has
 * closed (the store is the context owner's to close). `closeStreams()` ends the open
 * server-sent event streams (which never end by themselves) and stops their
 * watcher: call it before closing the server, or the server waits for them.
 */
export function createApp(ctx: EstateContext, options: AppOptions = {}) {
  const sink = options.log;
  // The one way a line reaches the sink: no line carries the data dir's path or a credential (see redactLogLine).
  const log = sink ? (line: Record<string, unknown>) => sink(redactLogLine(line, ctx.dataDir)) : () => {};
  const serve = serveSettings(ctx.config);
  const authenticate = createAuthenticator({
    credentials: ctx.store.credentials,
    tokenSecret: ctx.store.tokenSecret,
    envApiKey: options.envApiKey,
    now: ctx.now,
    onUsageError: (err) => log({ level: 'warn', time: new Date().toISOString(), event: 'key_usage_write_failed', error: String((err as Error)?.message ?? err) }),
  });
  // Warm the store's records now, in the background (the data dir's logs are indexed): the first write or filtered read then pays no full scan.
  for (const [name, records] of [['completions', ctx.store.completions], ['entries', ctx.store.entries]] as const) {
    records.refresh().catch((err: unknown) => log({ level: 'warn', time: new Date().toISOString(), event: 'log_index_failed', file: name, store: ctx.store.describe(), error: String((err as Error)?.message ?? err) }));
  }
  const workStream = createWorkStream(ctx, {
    authenticate,
    perClient: serve.streams.per_client,
    maxClients: serve.streams.max_open,
    maxLifetimeMs: serve.streams.max_lifetime_s * 1000,
    onError: (err) => log({ level: 'warn', time: new Date().toISOString(), event: 'work_stream_error', error: String((err as Error)?.message ?? err) }),
  });
  const onAuthFailed = ({ carrier, keyId, path }: AuthFailure) => log({ level: 'warn', time: new Date().toISOString(), event: 'auth_failed', carrier, key_id: keyId, path });
  const metrics = createServerMetrics({
    readings: () => estateReadings(ctx.dataDir, ctx.store, { staleAfterS: ctx.config.events.stale_after_s, schedules: ctx.config.schedules }, ctx.now()),
    streams: workStream.open,
    version: VERSION,
    notifyTargets: ctx.config.notify.map((n) => n.name),
  });
  // One rate limit and one bound on expensive routes for the API and /mcp alike.
  const rateLimit = new RateLimiter(serve.rate_limit);
  const expensive = new ConcurrencyLimit({
    maxConcurrent: serve.expensive_routes.max_concurrent,
    maxQueued: serve.expensive_routes.max_queued,
    maxWaitMs: serve.expensive_routes.max_wait_ms,
    perClient: serve.expensive_routes.per_client,
    perClientQueued: serve.expensive_routes.per_client_queued,
  });
  /** The OpenAPI document, for MCP's `estate://openapi` resource: built at its first read. */
  let openApi: unknown;
  const handler = createHandler(operations, ctx, {
    authenticate,
    rawRoutes: [
      ...docsRoutes(operations, PAGE_ROUTE_DOCS),
      ...pageRoutes(ctx),
      ...dashboardRoutes(ctx),
      workStream.route,
      metricsRoute(metrics, { authenticate, onAuthFailed }),
      ...mcpRoutes(ctx, operationTools(operations), { authenticate, onAuthFailed, rateLimit, expensive }, () => (openApi ??= buildOpenApi(operations, PAGE_ROUTE_DOCS))),
    ],
    htmlPages: { '/': 'dashboard' },
    observe: metrics.observe,
    onAuthFailed,
    onAccess: log,
    corsOrigins: new Set(serve.cors_origins),
    rateLimit,
    expensive,
    unsent: new UnsentBudget(serve.max_unsent_bytes, serve.max_unsent_bytes_per_client),
    onInternalError: (err: EstateError, req) => {
      const cause = err.cause instanceof Error ? err.cause : undefined;
      log({
        level: 'error',
        time: new Date().toISOString(),
        id: requestId(req),
        method: req.method,
        path: (req.url ?? '').split('?')[0],
        error: err.message,
        // The code (a SQLSTATE, an errno name) before the class name, which the minified bundle does not keep.
        cause: cause ? `${(cause as NodeJS.ErrnoException).code ?? cause.name}: ${cause.message}` : undefined,
      });
    },
  });
  return Object.assign(handler, {
    /** Writes a line to the app's log, redacted; for the lines of the listener (client errors). */
    log: (line: object) => log({ ...line }),
    closeStreams: () => workStream.close(),
    close: async () => {
      metrics.close();
      await workStream.close();
      await authenticate.close();
    },
  });
}
