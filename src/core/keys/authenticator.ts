import type { Principal } from '../../api/context.ts';
import { KeyCache, keyIdOf, matchKey, secretsEqual, SCOPES } from './key-store.ts';
import { TokenVerifier } from './tokens.ts';
import { UsageRecorder } from './usage-recorder.ts';

/** Decides who a presented secret belongs to; undefined when it is not a valid credential. */
export type Authenticator = (secret: string) => Promise<Principal | undefined>;

/** An authenticator that watches the data dir; `close` stops watching and waits for pending last-used writes. */
export type ClosableAuthenticator = Authenticator & { close: () => Promise<void> };

export interface AuthenticatorOptions {
  dataDir: string;
  /** ESTATE_API_KEY: a key of user `operator` with every scope. */
  envApiKey?: string | undefined;
  now?: () => Date;
  /** Called when recording a key's last use fails; the request it came from is never affected. */
  onUsageError?: (err: unknown) => void;
}

/**
 * Tries ESTATE_API_KEY, then the key store, then a bearer token. Every
 * comparison of secrets is constant-time. Keys created or revoked in
 * keys.json, and a replaced token secret, take effect without a restart.
 * A key-shaped secret checked against a keys.json that cannot be read or
 * parsed throws `unavailable` (503): the secret may be genuine.
 */
export function createAuthenticator(options: AuthenticatorOptions): ClosableAuthenticator {
  const keys = new KeyCache(options.dataDir);
  const tokens = new TokenVerifier(options.dataDir);
  const usage = new UsageRecorder(options.dataDir, options.onUsageError);
  const now = options.now ?? (() => new Date());
  const authenticate: Authenticator = async (secret) => {
    if (!secret) return undefined;
    if (options.envApiKey && secretsEqual(secret, options.envApiKey)) {
      return { userId: 'operator', keyId: 'env', scopes: SCOPES };
    }
    const at = now();
    // Only a key-shaped secret needs keys.json: a broken credential store
    // (503) does not stop bearer tokens.
    const record = keyIdOf(secret) === undefined ? undefined : matchKey(keys.get(), secret, at);
    if (record) {
      usage.note(record, at);
      return { userId: record.user_id, keyId: record.key_id, scopes: record.scopes };
    }
    return tokens.verify(secret, at);
  };
  const close = async () => {
    keys.close();
    tokens.close();
    await usage.settle();
  };
  return Object.assign(authenticate, { close });
}
