import { forgeBodyError, forgeFetchError, forgeStatusError } from './forge-errors.ts';
import type { ForgeSettings } from './forge-settings.ts';

/** Largest forge answer read, in bytes (a page of 50 repositories is ~150 KB). */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

export interface ForgeAnswer {
  body: unknown;
  headers: Headers;
}

export interface ForgeRequestOptions {
  /** Aborts the request when a whole listing runs out of time. */
  deadline?: { signal: AbortSignal; budgetMs: number };
  /** The message of a 404 answer (a `not_found` error); without it a 404 is a bad_gateway. */
  notFound?: string;
}

/**
 * GET `/api/v1{path}` on the forge with token auth, bounded by
 * `forge.timeoutMs` (connect, headers and body together). The path's
 * dynamic segments must already be encoded. Every failure is an
 * EstateError (see forge-errors.ts); a 2xx answer that is not JSON too.
 */
export async function forgeGet(
  forge: ForgeSettings,
  path: string,
  query: Record<string, string | number>,
  options: ForgeRequestOptions = {},
): Promise<ForgeAnswer> {
  const url = new URL(`${forge.url}/api/v1${path}`);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, String(v));
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (forge.token) headers.Authorization = `token ${forge.token}`;
  const timeout = AbortSignal.timeout(forge.timeoutMs);
  const signal = options.deadline ? AbortSignal.any([timeout, options.deadline.signal]) : timeout;
  const failed = (err: unknown) =>
    forgeFetchError(forge, err, !timeout.aborted && Boolean(options.deadline?.signal.aborted), options.deadline?.budgetMs ?? forge.timeoutMs);

  let response: Response;
  let text: string;
  try {
    // Redirects are not followed: the token must never travel to another address.
    response = await fetch(url, { headers, signal, redirect: 'manual' });
    text = await readText(response, MAX_BODY_BYTES);
  } catch (err) {
    if (err instanceof TooLarge) throw forgeBodyError(forge, `${url.pathname} with more than ${MAX_BODY_BYTES} bytes`);
    throw failed(err);
  }
  if (response.status < 200 || response.status > 299) {
    throw forgeStatusError(forge, response.status, response.statusText, text, options.notFound);
  }
  try {
    return { body: JSON.parse(text), headers: response.headers };
  } catch {
    throw forgeBodyError(forge, `${url.pathname} with a body that is not JSON`);
  }
}

class TooLarge extends Error {}

/** The body as text, refusing more than `maxBytes`. */
async function readText(response: Response, maxBytes: number): Promise<string> {
  if (!response.body) return '';
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.byteLength;
    if (size > maxBytes) throw new TooLarge();
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks).toString('utf8');
}
