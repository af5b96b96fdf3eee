import { DEFAULT_MAX_ANSWER_BYTES } from '../config.ts';
import { EstateError } from '../errors.ts';

// What remote mode (`--url`) trusts of a server's answer: never a redirect
// (it could carry the API key and the request body to another server), and
// never more than a bounded number of bytes.

export interface AnswerTarget {
  url: string;
  apiKey?: string | undefined;
  maxBytes?: number | undefined;
}

/**
 * Throws a clear `io` error (exit 1) when `response` is a redirect: estate
 * asks with `redirect: 'manual'` and follows none, same origin or not. The
 * message names where it points, as a `--url` to use if the user trusts it.
 *
 * @param asked the URL that was asked for, `target.url` + the route
 * @param route the route part of `asked` (`trends`, `work/stream`), to find the new base URL
 */
export function refuseRedirect(response: Response, target: AnswerTarget, asked: URL, route: string): void {
  const location = response.headers.get('location');
  if (response.status < 300 || response.status > 399 || location === null) return;
  void response.body?.cancel().catch(() => {});
  let to: URL;
  try {
    to = new URL(location, asked);
  } catch {
    throw new EstateError('io', `the server at ${asked.origin} redirected to an invalid address; estate does not follow redirects`);
  }
  const tail = `/${route.replace(/^\//, '').split('?')[0] ?? ''}`;
  const base = to.pathname.endsWith(tail) ? to.pathname.slice(0, -tail.length) : '';
  const credential = target.apiKey ? 'the API key' : 'a credential';
  throw new EstateError(
    'io',
    `the server at ${asked.origin} redirected to ${to.origin}; estate does not follow redirects, which would send ${credential} and the request there: if you trust it, use --url ${to.origin}${base}`,
  );
}

/**
 * The body as text, read as it arrives and refused (an `io` error, the
 * request aborted through `abort`) once it passes `target.maxBytes`.
 */
export async function readAnswer(response: Response, target: AnswerTarget, abort: AbortController): Promise<string> {
  const maxBytes = target.maxBytes ?? DEFAULT_MAX_ANSWER_BYTES;
  const tooLarge = () => {
    abort.abort();
    void response.body?.cancel().catch(() => {});
    return new EstateError('io', `the answer from ${target.url} is larger than ${maxBytes} bytes; estate stopped reading it (ESTATE_MAX_ANSWER_BYTES sets the limit)`);
  };
  if (Number(response.headers.get('content-length') ?? 0) > maxBytes) throw tooLarge();
  if (!response.body) return '';
  const decoder = new TextDecoder();
  const parts: string[] = [];
  let bytes = 0;
  try {
    for await (const chunk of response.body) {
      bytes += chunk.byteLength;
      if (bytes > maxBytes) throw tooLarge();
      parts.push(decoder.decode(chunk, { stream: true }));
    }
  } catch (err) {
    if (err instanceof EstateError) throw err;
    throw new EstateError('io', `cannot read the answer of ${target.url}: ${reasonOf(err)}`);
  }
  parts.push(decoder.decode());
  return parts.join('');
}

/** Why a fetch (or the read of its body) failed, in one phrase. */
export function reasonOf(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { message?: string } };
  if (e?.name === 'TimeoutError') return 'timed out';
  return e?.cause?.message ?? e?.message ?? String(err);
}
