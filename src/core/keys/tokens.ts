import { randomBytes } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import type { Principal, Scope } from '../../api/context.ts';
import { EstateError } from '../../errors.ts';
import { assertUserId, USER_ID } from './key-store.ts';
import { SCOPES } from './scopes.ts';
import { ensureTokenSecret, readTokenSecret, tokenSecretPath } from './token-secret.ts';
import { WatchedFile } from './watched-file.ts';

// Bearer access tokens are JWTs signed with HS256 by the data dir's token
// secret. Claims: iss `estate`, sub = user, scope = space-separated scopes,
// iat, exp, jti. Only HS256 is accepted (never `none`), and exp is required.

export const TOKEN_ISSUER = 'estate';
/** The longest life a token may be issued with; longer-lived credentials should be revocable keys. */
export const MAX_TOKEN_TTL_MS = 30 * 86_400_000;
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
const MAX_TOKEN_CHARS = 4096;

export interface IssuedToken {
  token: string;
  user_id: string;
  scopes: Scope[];
  expires_at: string;
}

export interface CreateTokenOptions {
  userId: string;
  ttlMs: number;
  /** Default: every scope. */
  scopes?: readonly Scope[] | undefined;
  now?: Date;
}

/** Signs a token for a user, creating the data dir's token secret on first use. */
export async function createToken(dataDir: string, options: CreateTokenOptions): Promise<IssuedToken> {
  assertUserId(options.userId);
  if (!(options.ttlMs >= 1000 && options.ttlMs <= MAX_TOKEN_TTL_MS)) {
    throw new EstateError('validation', 'a token lives between 1 second and 30 days');
  }
  const scopes = SCOPES.filter((s) => (options.scopes ?? SCOPES).includes(s));
  if (!scopes.length) throw new EstateError('validation', 'a token needs at least one scope');
  const iat = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const exp = iat + Math.ceil(options.ttlMs / 1000);
  const token = await new SignJWT({ scope: scopes.join(' ') })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(TOKEN_ISSUER)
    .setSubject(options.userId)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .setJti(randomBytes(12).toString('base64url'))
    .sign(await ensureTokenSecret(dataDir));
  return { token, user_id: options.userId, scopes, expires_at: new Date(exp * 1000).toISOString() };
}

/** Cheap test before any crypto: three dot-separated base64url parts of a sane length. */
export function looksLikeToken(presented: string): boolean {
  return presented.length <= MAX_TOKEN_CHARS && JWT_SHAPE.test(presented);
}

/**
 * Checks bearer tokens for a running server. The secret is re-read when the
 * file changes, so deleting it (every token dies) needs no restart.
 */
export class TokenVerifier {
  readonly #secret: WatchedFile<Uint8Array | undefined>;

  constructor(dataDir: string, options: { watch?: boolean } = {}) {
    this.#secret = new WatchedFile(tokenSecretPath(dataDir), (file) => (file ? readTokenSecret(dataDir) : undefined), options);
  }

  /** The principal a token stands for; undefined when it is malformed, tampered, wrongly signed, expired or not ours. */
  async verify(presented: string, now: Date): Promise<Principal | undefined> {
    if (!looksLikeToken(presented)) return undefined;
    const secret = this.#secret.get();
    if (!secret) return undefined;
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(presented, secret, {
        algorithms: ['HS256'],
        issuer: TOKEN_ISSUER,
        requiredClaims: ['sub', 'exp', 'iat', 'jti'],
        currentDate: now,
      }));
    } catch {
      return undefined;
    }
    const { sub, scope } = payload;
    if (typeof sub !== 'string' || !USER_ID.test(sub) || typeof scope !== 'string') return undefined;
    const words = scope.split(' ');
    const scopes = SCOPES.filter((s) => words.includes(s));
    if (!scopes.length || scopes.length !== words.length) return undefined;
    return { userId: sub, keyId: 'token', scopes };
  }

  close(): void {
    this.#secret.close();
  }
}
