import { type EstateContext, createContext } from '../api/context.ts';
import { assertDataDir, loadConfig, resolveDataDir } from '../config.ts';
import type { CommonOptions } from './common-options.ts';
import type { CliIO } from './io.ts';
import type { RemoteTarget } from './remote-call.ts';
import { resolveTarget } from './resolve-target.ts';

/**
 * The local data dir, config and store, checked: a missing data dir is a
 * usage error (exit 2). The caller closes `ctx.store` when done.
 */
export function localContext(options: CommonOptions, io: CliIO): EstateContext {
  const dataDir = resolveDataDir(options.dataDir, io.env);
  assertDataDir(dataDir, io.env);
  return createContext(dataDir, loadConfig(dataDir, options.config, io.env), undefined, options.store);
}

/** Runs `fn` with a local context (see localContext), closing its store afterwards. */
export async function withLocalContext<T>(options: CommonOptions, io: CliIO, fn: (ctx: EstateContext) => Promise<T>): Promise<T> {
  const ctx = localContext(options, io);
  try {
    return await fn(ctx);
  } finally {
    await ctx.store.close();
  }
}

/** The server to call and its credential when remote mode is asked for (flags, environment or a context: see resolveTarget), else undefined. */
export function remoteTarget(options: CommonOptions, io: CliIO): RemoteTarget | undefined {
  return resolveTarget(options, io.env);
}
