import { randomBytes } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import type { Principal, Scope } from './principal.ts';
import { EstateError } from '../../errors.ts';
import { assertUserId, USER_ID } from './key-store.ts';
import { TOKEN_SCOPES } from './scopes.ts';
import type { TokenSecret } from '../store/store.ts';
import { ensureTokenSecret } from './token-secret.ts';

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
  /** Default: read and write. A token carries no node, so no `ingest` scope (an ingest credential is a key). */
  scopes?: readonly Scope[] | undefined;
  now?: Date;
}

/** Signs a token for a user with the store's token secret (`secret`), or a data dir's; the secret is created on first use. */
export async function createToken(secret: TokenSecret | string, options: CreateTokenOptions): Promise<IssuedToken> {
  assertUserId(options.userId);
  if (!(options.ttlMs >= 1000 && options.ttlMs <= MAX_TOKEN_TTL_MS)) {
    throw new EstateError('validation', 'a token lives between 1 second and 30 days');
  }
  if (options.scopes?.includes('ingest')) throw new EstateError('validation', 'a token cannot have the ingest scope: make an ingest key (estate keys create --scope ingest --node NAME)');
  const scopes = TOKEN_SCOPES.filter((s) => (options.scopes ?? TOKEN_SCOPES).includes(s));
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
    .sign(await (typeof secret === 'string' ? ensureTokenSecret(secret) : secret.ensure()));
  return { token, user_id: options.userId, scopes, expires_at: new Date(exp * 1000).toISOString() };
}

/** Cheap test before any crypto: three dot-separated base64url parts of a sane length. */
export function looksLikeToken(presented: string): boolean {
  return presented.length <= MAX_TOKEN_CHARS && JWT_SHAPE.test(presented);
}

/**
 * Checks bearer tokens for a running server against the store's token
 * secret as it is now (a replaced or deleted secret needs no restart).
 */
export class TokenVerifier {
  readonly #secret: TokenSecret;

  constructor(secret: TokenSecret) {
    this.#secret = secret;
  }

  /** The principal a token stands for; undefined when it is malformed, tampered, wrongly signed, expired or not ours. */
  async verify(presented: string, now: Date): Promise<Principal | undefined> {
    if (!looksLikeToken(presented)) return undefined;
    const secret = await this.#secret.current();
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
    const scopes = TOKEN_SCOPES.filter((s) => words.includes(s));
    if (!scopes.length || scopes.length !== words.length) return undefined;
    return { userId: sub, keyId: 'token', scopes };
  }
}
