import type { Scope } from './principal.ts';
import { EstateError } from '../../errors.ts';

/** Every scope a credential can hold: `read` opens GET routes, `write` opens POST and DELETE routes. */
export const SCOPES = ['read', 'write'] as const satisfies readonly Scope[];

/**
 * `read`, `write`, `read,write` (any order, spaces allowed) → the scopes, in
 * canonical order. Anything else is a `usage` error (exit 2) naming `what`.
 */
export function parseScopes(text: string, what = '--scope'): Scope[] {
  const words = text.split(',').map((w) => w.trim());
  const unknown = words.filter((w) => !(SCOPES as readonly string[]).includes(w));
  if (unknown.length || !words.length) {
    throw new EstateError('usage', `invalid ${what} "${text}": use read, write or read,write`);
  }
  return SCOPES.filter((s) => words.includes(s));
}
