import type { Scope } from './principal.ts';
import { EstateError } from '../../errors.ts';

/**
 * Every scope a credential can hold: `read` opens GET routes, `write` opens
 * POST and DELETE routes, `ingest` opens only `POST /ingest` (which `write`
 * opens too), for one node when the key names one (DESIGN.md 7a), and
 * `metrics` opens only `GET /metrics` (which `read` opens too): the key a
 * Prometheus server scrapes with reads nothing else.
 */
export const SCOPES = ['read', 'write', 'ingest', 'metrics'] as const satisfies readonly Scope[];

/** What a key or token holds when no scope is asked for, and what ESTATE_API_KEY and the local CLI hold: `write` opens `/ingest` already. */
export const DEFAULT_SCOPES = ['read', 'write'] as const satisfies readonly Scope[];

/** The scopes a bearer token may carry: a token names no node, so a node-bound `ingest` credential is a key. */
export const TOKEN_SCOPES = DEFAULT_SCOPES;

/** Whether a credential holding `scopes` may use a route that needs `needed`: `write` opens `ingest` routes too, `read` the `metrics` route. */
export function grants(scopes: readonly Scope[], needed: Scope): boolean {
  return scopes.includes(needed) || (needed === 'ingest' && scopes.includes('write')) || (needed === 'metrics' && scopes.includes('read'));
}

/**
 * `read`, `write`, `ingest`, `metrics` or a comma-separated list of them (any order,
 * spaces allowed; only those of `allowed`) → the scopes, in canonical order.
 * Anything else is a `usage` error (exit 2) naming `what`.
 */
export function parseScopes(text: string, what = '--scope', allowed: readonly Scope[] = SCOPES): Scope[] {
  const words = text.split(',').map((w) => w.trim());
  const unknown = words.filter((w) => !(allowed as readonly string[]).includes(w));
  if (unknown.length || !words.length) {
    throw new EstateError('usage', `invalid ${what} "${text}": use ${allowed.join(', ')} or a comma-separated list of them, like read,write`);
  }
  return allowed.filter((s) => words.includes(s));
}
