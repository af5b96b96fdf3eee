import { resolveSecrets, type EstateConfig } from '../config.ts';
import { createExternalSources, type ExternalSources } from '../core/external-sources.ts';
import { entryLog } from '../core/publishing.ts';
import type { RecordLog } from '../core/record-log.ts';
import { completionLog } from '../core/work.ts';

/** What every operation handler may use: the data dir and settings, never a socket or a terminal. */
export interface EstateContext {
  dataDir: string;
  config: EstateConfig;
  /** When this process started (the server's uptime counts from it). */
  startedAt: Date;
  now: () => Date;
  /** Secrets and caches of the sources estate does not own (forge, providers, statistics): one per context. */
  sources: ExternalSources;
  /** The logs estate writes, each with its in-memory index: one per context (the server's serves every request, a CLI run has its own). */
  logs: EstateLogs;
}

export interface EstateLogs {
  completions: RecordLog;
  entries: RecordLog;
}

export type Scope = 'read' | 'write';

/** Who is calling, as decided by the credential. */
export interface Principal {
  userId: string;
  /** The key's id, or `env` for ESTATE_API_KEY, or `token` for a bearer token. */
  keyId: string;
  scopes: readonly Scope[];
}

/** `env` supplies the secrets the config names (default: the process environment, read by config.ts). */
export function createContext(dataDir: string, config: EstateConfig, env?: NodeJS.ProcessEnv): EstateContext {
  const sources = createExternalSources(config, resolveSecrets(config, env));
  const logs = { completions: completionLog(dataDir), entries: entryLog(dataDir) };
  return { dataDir, config, startedAt: new Date(), now: () => new Date(), sources, logs };
}
