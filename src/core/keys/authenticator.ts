import type { Principal } from '../../api/context.ts';
import { KeyCache, matchKey, secretsEqual, SCOPES } from './key-store.ts';

/** Decides who a presented secret belongs to; undefined when it is not a valid credential. */
export type Authenticator = (secret: string) => Principal | undefined;

export interface AuthenticatorOptions {
  dataDir: string;
  /** ESTATE_API_KEY: a key of user `operator` with every scope. */
  envApiKey?: string | undefined;
  now?: () => Date;
}

/** Tries ESTATE_API_KEY, then the key store. Every comparison is constant-time. */
export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  const cache = new KeyCache(options.dataDir);
  const now = options.now ?? (() => new Date());
  return (secret) => {
    if (!secret) return undefined;
    if (options.envApiKey && secretsEqual(secret, options.envApiKey)) {
      return { userId: 'operator', keyId: 'env', scopes: SCOPES };
    }
    const record = matchKey(cache.get(), secret, now());
    return record ? { userId: record.user_id, keyId: record.key_id, scopes: record.scopes } : undefined;
  };
}
