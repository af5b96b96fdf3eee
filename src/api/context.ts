import type { EstateConfig } from '../config.ts';

/** What every operation handler may use: the data dir and settings, never a socket or a terminal. */
export interface EstateContext {
  dataDir: string;
  config: EstateConfig;
  /** When this process started (the server's uptime counts from it). */
  startedAt: Date;
  now: () => Date;
}

export type Scope = 'read' | 'write';

/** Who is calling, as decided by the credential. */
export interface Principal {
  userId: string;
  /** The key's id, or `env` for ESTATE_API_KEY, or `token` for a bearer token. */
  keyId: string;
  scopes: readonly Scope[];
}

export function createContext(dataDir: string, config: EstateConfig): EstateContext {
  return { dataDir, config, startedAt: new Date(), now: () => new Date() };
}
