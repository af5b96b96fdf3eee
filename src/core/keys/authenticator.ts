import type { Principal } from './principal.ts';
import type { Credentials, TokenSecret } from '../store/store.ts';
import { keyIdOf, matchKey, secretMatcher } from './key-store.ts';
import { DEFAULT_SCOPES } from './scopes.ts';
import { TokenVerifier } from './tokens.ts';
import { UsageRecorder } from './usage-recorder.ts';

/** Decides who a presented secret belongs to; undefined when it is not a valid credential. */
export type Authenticator = (secret: string) => Promise<Principal | undefined>;

/** An authenticator; `close` waits for pending last-used writes (the store's caches are the store's to close). */
export type ClosableAuthenticator = Authenticator & { close: () => Promise<void> };

export interface AuthenticatorOptions {
  /** The store's credential store and token secret. */
  credentials: Credentials;
  tokenSecret: TokenSecret;
  /** ESTATE_API_KEY: a key of user `operator` with the scopes read and write. */
  envApiKey?: string | undefined;
  now?: () => Date;
  /** Called when recording a key's last use fails; the request it came from is never affected. */
  onUsageError?: (err: unknown) => void;
}

/**
 * Tries ESTATE_API_KEY, then the key store, then a bearer token. Every
 * comparison of secrets is constant-time. Keys created or revoked in the
 * store, and a replaced token secret, take effect without a restart (see
 * Credentials.lookup). A key-shaped secret checked against a credential
 * store that cannot be read throws `unavailable` (503): it may be genuine.
 */
export function createAuthenticator(options: AuthenticatorOptions): ClosableAuthenticator {
  const tokens = new TokenVerifier(options.tokenSecret);
  const usage = new UsageRecorder((keyId, at) => options.credentials.touch(keyId, at), options.onUsageError);
  const now = options.now ?? (() => new Date());
  const isEnvKey = options.envApiKey ? secretMatcher(options.envApiKey) : undefined;
  const authenticate: Authenticator = async (secret) => {
    if (!secret) return undefined;
    if (isEnvKey?.(secret)) {
      return { userId: 'operator', keyId: 'env', scopes: DEFAULT_SCOPES };
    }
    const at = now();
    // Only a key-shaped secret needs the credential store: a broken one
    // (503) does not stop bearer tokens.
    const keyId = keyIdOf(secret);
    const stored = keyId === undefined ? undefined : await options.credentials.lookup(keyId);
    const record = keyId === undefined ? undefined : matchKey(stored ? [stored] : [], secret, at);
    if (record) {
      usage.note(record, at);
      return { userId: record.user_id, keyId: record.key_id, scopes: record.scopes, ...(record.node === null ? {} : { node: record.node }) };
    }
    return tokens.verify(secret, at);
  };
  const close = async () => {
    await usage.settle();
  };
  return Object.assign(authenticate, { close });
}
