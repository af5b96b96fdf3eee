import type { EstateContext } from '../api/context.ts';
import { operations } from '../api/operations/index.ts';
import { createAuthenticator } from '../core/keys/authenticator.ts';
import type { EstateError } from '../errors.ts';
import { createHandler } from './handler.ts';

export interface AppOptions {
  envApiKey?: string | undefined;
  log?: (line: Record<string, unknown>) => void;
}

/** The estate HTTP API over one data dir, as a `(req, res)` handler. */
export function createApp(ctx: EstateContext, options: AppOptions = {}) {
  const log = options.log ?? (() => {});
  return createHandler(operations, ctx, {
    authenticate: createAuthenticator({ dataDir: ctx.dataDir, envApiKey: options.envApiKey, now: ctx.now }),
    onInternalError: (err: EstateError, req) => {
      const cause = err.cause instanceof Error ? err.cause : undefined;
      log({
        level: 'error',
        time: new Date().toISOString(),
        method: req.method,
        path: (req.url ?? '').split('?')[0],
        error: err.message,
        cause: cause ? `${cause.name}: ${cause.message}` : undefined,
      });
    },
  });
}
