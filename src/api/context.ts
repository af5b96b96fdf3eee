import { environment, resolveSecrets, resolveStoreSpec, type EstateConfig } from '../config.ts';
import { createExternalSources, type ExternalSources } from '../core/external-sources.ts';
import { openStore } from '../core/store/open-store.ts';
import type { Store } from '../core/store/store.ts';

export type { Principal, Scope } from '../core/keys/principal.ts';

/** What every operation handler may use: the data dir and settings, never a socket or a terminal. */
export interface EstateContext {
  dataDir: string;
  config: EstateConfig;
  /** When this process started (the server's uptime counts from it). */
  startedAt: Date;
  now: () => Date;
  /** Secrets and caches of the sources estate does not own (forge, providers, statistics): one per context. */
  sources: ExternalSources;
  /**
   * Everything estate writes and reads back (keyed logs, training runs,
   * keys, the token secret): one per context (the server's serves every
   * request, a CLI run has its own). Its owner closes it.
   */
  store: Store;
}

/**
 * `env` supplies the secrets the config names and `ESTATE_STORE` (default:
 * the process environment, read by config.ts); `storeFlag` is `--store`.
 */
export function createContext(dataDir: string, config: EstateConfig, env?: NodeJS.ProcessEnv, storeFlag?: string): EstateContext {
  const sources = createExternalSources(config, resolveSecrets(config, env));
  const store = openStore(resolveStoreSpec(storeFlag, config, env), { dataDir, config, env: environment(env) });
  return { dataDir, config, startedAt: new Date(), now: () => new Date(), sources, store };
}
