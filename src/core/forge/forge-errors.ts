import { EstateError } from '../../errors.ts';
import { fetchFailure } from '../fetch-failure.ts';
import type { ForgeSettings } from './forge-settings.ts';

// Every failure to talk to the forge becomes one EstateError whose message
// names the forge's URL (never the token) and says what to do:
// unreachable → bad_gateway (502), too slow → gateway_timeout (504),
// an error status → bad_gateway, except 404 where the caller says what was missing.

/** A fetch that threw: refused, reset, DNS failure, or aborted by a timeout. */
export function forgeFetchError(forge: ForgeSettings, err: unknown, listingTimedOut: boolean, listingBudgetMs: number): EstateError {
  const { timedOut, reason } = fetchFailure(err);
  if (timedOut) {
    const message = listingTimedOut
      ? `the forge at ${forge.url} did not finish listing within ${listingBudgetMs} ms`
      : `the forge at ${forge.url} did not answer within ${forge.timeoutMs} ms (forge.timeout_ms)`;
    return new EstateError('gateway_timeout', message, { cause: err });
  }
  return new EstateError('bad_gateway', `the forge at ${forge.url} is unreachable: ${reason}`, { cause: err });
}

/** An answer with an error status; `notFound` is the message for a 404 (else it is a bad_gateway). */
export function forgeStatusError(forge: ForgeSettings, status: number, statusText: string, body: string, notFound?: string): EstateError {
  if (status === 404 && notFound) return new EstateError('not_found', notFound);
  const said = forgeMessage(body);
  const head = `the forge at ${forge.url} answered ${status}${statusText ? ` ${statusText}` : ''}${said ? `: ${said}` : ''}`;
  if (status === 401 || status === 403) {
    const hint = forge.token
      ? `check the token in $${forge.tokenEnv} (is it valid, with read access to repositories and issues?)`
      : `set $${forge.tokenEnv} to a forge access token`;
    return new EstateError('bad_gateway', `${head}; ${hint}`);
  }
  if (status >= 300 && status < 400) return new EstateError('bad_gateway', `${head}; set forge.url to the forge's final address`);
  if (status === 404) return new EstateError('bad_gateway', `${head}; is forge.url the forge's base URL (without /api/v1)?`);
  return new EstateError(status === 504 ? 'gateway_timeout' : 'bad_gateway', head);
}

/** A 2xx answer whose body is not what the Forgejo API documents. */
export function forgeBodyError(forge: ForgeSettings, what: string): EstateError {
  return new EstateError('bad_gateway', `the forge at ${forge.url} answered ${what}; is forge.url a Forgejo or Gitea server?`);
}

/**
 * More than `forge.maxBytes` from the forge: in one answer to `path`, or with
 * `inAll`, in the answers of one listing.
 */
export function forgeTooLargeError(forge: ForgeSettings, path: string, inAll = false): EstateError {
  const what = inAll ? `pages of ${path} that add up to more than ${forge.maxBytes} bytes` : `${path} with more than ${forge.maxBytes} bytes`;
  return new EstateError('bad_gateway', `the forge at ${forge.url} answered ${what}; estate reads at most forge.max_bytes (${forge.maxBytes}) per call`);
}

const MAX_MESSAGE = 300;
/** C0 and C1 controls, DEL, bidi overrides and isolates, line and paragraph separators: never passed on from an upstream message. */
const UNSAFE = /[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]+/g;

/**
 * The human part of a Forgejo error body: `{"message": "...", "errors": [...]}`.
 * Plain text is kept (first line, cut); HTML error pages are dropped;
 * control and bidi characters become spaces.
 */
export function forgeMessage(body: string): string {
  const text = body.trim();
  if (!text || text.startsWith('<')) return '';
  let said = text.split('\n')[0] ?? '';
  try {
    const parsed = JSON.parse(text) as { message?: unknown; errors?: unknown };
    const parts = [typeof parsed.message === 'string' ? parsed.message : ''];
    if (Array.isArray(parsed.errors)) parts.push(...parsed.errors.filter((e): e is string => typeof e === 'string'));
    said = parts.filter(Boolean).join('; ');
  } catch {
    // not JSON: keep the first line as it is
  }
  said = said.replace(UNSAFE, ' ').replace(/ {2,}/g, ' ').trim();
  return said.length > MAX_MESSAGE ? `${said.slice(0, MAX_MESSAGE - 1)}…` : said;
}
