import type { TtlCache } from '../ttl-cache.ts';
import { forgeBodyError, forgeFetchError, forgeStatusError, forgeTooLargeError } from './forge-errors.ts';
import type { ForgeSettings } from './forge-settings.ts';
import { observeExternal, observing } from '../observe.ts';

export interface ForgeAnswer {
  body: unknown;
  headers: Headers;
  /** Bytes of the body as the forge sent them. */
  bytes: number;
}

/**
 * Requests in flight, shared by URL: a caller asking for a URL that is being
 * fetched waits for that answer instead of asking again (a TtlCache with
 * `ttlMs: 0`: nothing is kept once the answer is in).
 */
export type ForgeInFlight = TtlCache<ForgeAnswer>;

export interface ForgeRequestOptions {
  /** Stops waiting when a whole listing runs out of time. */
  deadline?: { signal: AbortSignal; budgetMs: number };
  /** The message of a 404 answer (a `not_found` error); without it a 404 is a bad_gateway. Same URL, same message. */
  notFound?: string;
  shared?: ForgeInFlight;
}

/**
 * GET `/api/v1{path}` on the forge with token auth, bounded by
 * `forge.timeoutMs` (connect, headers and body together) and by
 * `forge.maxBytes`: the body is read as it arrives and the request is
 * aborted as soon as it passes the bound, never buffered whole. The path's
 * dynamic segments must already be encoded. Every failure is an
 * EstateError (see forge-errors.ts); a 2xx answer that is not JSON too.
 * With `shared`, identical requests in flight are one upstream request;
 * each caller still stops waiting at its own `deadline`.
 */
export async function forgeGet(
  forge: ForgeSettings,
  path: string,
  query: Record<string, string | number>,
  options: ForgeRequestOptions = {},
): Promise<ForgeAnswer> {
  const url = new URL(`${forge.url}/api/v1${path}`);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, String(v));
  const { deadline, shared, notFound } = options;
  if (!shared) return fetchAnswer(forge, url, notFound, deadline);
  const answer = shared.get(url.href, () => fetchAnswer(forge, url, notFound));
  return deadline ? beforeDeadline(answer, forge, deadline) : answer;
}

/** fetchAnswer, observed for the metrics (observe.ts): how long, and whether it answered, failed or timed out. */
async function fetchAnswer(forge: ForgeSettings, url: URL, notFound: string | undefined, deadline?: ForgeRequestOptions['deadline']): Promise<ForgeAnswer> {
  const started = observing('external');
  try {
    const answer = await fetchForge(forge, url, notFound, deadline);
    observeExternal(started, 'forge', 'ok');
    return answer;
  } catch (err) {
    observeExternal(started, 'forge', (err as { code?: unknown })?.code === 'gateway_timeout' ? 'timeout' : 'error');
    throw err;
  }
}

async function fetchForge(forge: ForgeSettings, url: URL, notFound: string | undefined, deadline?: ForgeRequestOptions['deadline']): Promise<ForgeAnswer> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (forge.token) headers.Authorization = `token ${forge.token}`;
  const timeout = AbortSignal.timeout(forge.timeoutMs);
  const tooLarge = new AbortController();
  const signal = AbortSignal.any([timeout, tooLarge.signal, ...(deadline ? [deadline.signal] : [])]);

  let response: Response;
  let read: { text: string; bytes: number };
  try {
    // Redirects are not followed: the token must never travel to another address.
    response = await fetch(url, { headers, signal, redirect: 'manual' });
    // An error answer is only read for its message.
    const ok = response.status >= 200 && response.status <= 299;
    read = await readText(response, ok ? forge.maxBytes : Math.min(forge.maxBytes, MAX_ERROR_BYTES), tooLarge, !ok);
  } catch (err) {
    if (err instanceof TooLarge) throw forgeTooLargeError(forge, url.pathname);
    throw forgeFetchError(forge, err, !timeout.aborted && Boolean(deadline?.signal.aborted), deadline?.budgetMs ?? forge.timeoutMs);
  }
  if (response.status < 200 || response.status > 299) {
    throw forgeStatusError(forge, response.status, response.statusText, read.text, notFound);
  }
  try {
    return { body: JSON.parse(read.text), headers: response.headers, bytes: read.bytes };
  } catch {
    throw forgeBodyError(forge, `${url.pathname} with a body that is not JSON`);
  }
}

/** `work`, or a gateway_timeout as soon as the listing's deadline passes (the shared request goes on for others). */
function beforeDeadline<T>(work: Promise<T>, forge: ForgeSettings, deadline: NonNullable<ForgeRequestOptions['deadline']>): Promise<T> {
  const late = () => forgeFetchError(forge, deadline.signal.reason, true, deadline.budgetMs);
  if (deadline.signal.aborted) return Promise.reject(late());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(late());
    deadline.signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => deadline.signal.removeEventListener('abort', onAbort));
  });
}

/** Most bytes of an error answer read (its message is cut far shorter). */
const MAX_ERROR_BYTES = 64 * 1024;

class TooLarge extends Error {}

/**
 * The body as text, aborting the request (through `abort`) as soon as it
 * passes `maxBytes`: a TooLarge error, or with `cut` the text read so far.
 */
async function readText(response: Response, maxBytes: number, abort: AbortController, cut: boolean): Promise<{ text: string; bytes: number }> {
  const refuse = () => {
    abort.abort();
    return new TooLarge();
  };
  if (!cut && Number(response.headers.get('content-length') ?? 0) > maxBytes) throw refuse();
  if (!response.body) return { text: '', bytes: 0 };
  const decoder = new TextDecoder();
  const parts: string[] = [];
  let bytes = 0;
  for await (const chunk of response.body) {
    bytes += chunk.byteLength;
    if (bytes > maxBytes) {
      if (!cut) throw refuse();
      parts.push(decoder.decode(chunk.subarray(0, chunk.byteLength - (bytes - maxBytes)), { stream: true }));
      break; // cancels the body, so the connection is not read any further
    }
    parts.push(decoder.decode(chunk, { stream: true }));
  }
  parts.push(decoder.decode());
  return { text: parts.join(''), bytes };
}
