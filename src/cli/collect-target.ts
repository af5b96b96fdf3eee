import { EstateError } from '../errors.ts';
import type { RemoteTarget } from './remote-call.ts';
import { resolveTarget } from './resolve-target.ts';

export interface CollectTargetFlags {
  url?: string | undefined;
  apiKey?: string | undefined;
  context?: string | undefined;
  dataDir?: string | undefined;
  config?: string | undefined;
  store?: string | undefined;
}

/**
 * The hub `estate collect` sends to, or undefined when it writes the local
 * series. A hub is found as every remote command finds its server
 * (resolveTarget: `--url`/`--context`, `ESTATE_URL`/`ESTATE_CONTEXT`, the
 * current context; `--api-key`, `ESTATE_API_KEY` or the context's key), with
 * one difference: a collector sending to a hub still has a data dir (its
 * spool, its counters, its config), so `--data-dir`, `--config` and
 * `ESTATE_DATA_DIR` may come with a hub. Without a hub named on the command
 * line, `--data-dir`, `--config` or `--store` (or `ESTATE_DATA_DIR` alone,
 * or `ESTATE_STORE`) mean the local series. A hub with `--store` is a usage error.
 */
export function collectTarget(flags: CollectTargetFlags, env: NodeJS.ProcessEnv): RemoteTarget | undefined {
  const remoteFlag = flags.url !== undefined ? '--url' : flags.context !== undefined ? '--context' : undefined;
  if (remoteFlag && flags.store !== undefined) throw new EstateError('usage', `${remoteFlag} sends the samples to a hub and --store writes them to a store: pass one`);
  if (!remoteFlag) {
    if (flags.dataDir !== undefined || flags.config !== undefined || flags.store !== undefined) return undefined;
    const hubInEnv = env.ESTATE_URL !== undefined || env.ESTATE_CONTEXT !== undefined;
    if (!hubInEnv && (env.ESTATE_DATA_DIR !== undefined || env.ESTATE_STORE !== undefined)) return undefined;
  }
  const { ESTATE_DATA_DIR: _, ...rest } = env;
  return resolveTarget({ url: flags.url, apiKey: flags.apiKey, context: flags.context }, rest);
}
