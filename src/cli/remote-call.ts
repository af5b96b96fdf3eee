import type { Operation } from '../api/define-operation.ts';
import type { RawInput } from '../api/parse-input.ts';
import type { OperationResult } from '../api/run-operation.ts';
import { ERROR_CODES, EstateError, type ErrorCode, type ValidationIssue } from '../errors.ts';
import { readAnswer, reasonOf, refuseRedirect } from './remote-answer.ts';
import { refusalError } from './remote-refusal.ts';

const CODE_BY_STATUS = new Map<number, ErrorCode>(
  (Object.entries(ERROR_CODES) as [ErrorCode, { status: number }][])
    .filter(([code]) => code !== 'io' && code !== 'usage')
    .map(([code, { status }]) => [status, code]),
);

export interface RemoteTarget {
  url: string;
  apiKey: string | undefined;
  /** Where the key came from (`--api-key`, `ESTATE_API_KEY`, `context hub`), for messages. */
  credentialFrom?: string;
  timeoutMs?: number;
  /** Largest answer read (default DEFAULT_MAX_ANSWER_BYTES). */
  maxBytes?: number;
}

/** `--watch`'s polling: the ETag of the answer shown (sent as If-None-Match), and a signal that abandons the call. */
export interface ConditionalCall {
  etag?: string | undefined;
  signal?: AbortSignal | undefined;
}

/** An answer and its ETag; status 304 (body undefined) when the server still has the answer of `etag`. */
export interface RemoteResult extends OperationResult {
  etag?: string | undefined;
}

/**
 * Calls an operation on a remote estate server. A success answers like a
 * local call; an error status becomes the EstateError the server raised, so
 * the CLI prints the same message and exits with the same code. A redirect
 * is never followed (see refuseRedirect) and an answer is read up to
 * `target.maxBytes` only.
 */
export async function remoteCall(op: Operation, target: RemoteTarget, raw: RawInput, conditional: ConditionalCall = {}): Promise<RemoteResult> {
  let path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(raw.path?.[name] ?? ''));
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(raw.query ?? {})) if (v !== undefined) query.set(k, v);
  if ([...query].length) path += `?${query}`;
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (target.apiKey) headers['X-API-Key'] = target.apiKey;
  if (raw.body !== undefined) headers['Content-Type'] = 'application/json';
  if (conditional.etag !== undefined) headers['If-None-Match'] = conditional.etag;
  const route = path.replace(/^\//, '');
  const url = new URL(route, ensureSlash(target.url));
  const abort = new AbortController();
  let response: Response;
  try {
    response = await fetch(url, {
      method: op.method,
      headers,
      body: raw.body === undefined ? null : JSON.stringify(raw.body),
      signal: AbortSignal.any([AbortSignal.timeout(target.timeoutMs ?? 30_000), abort.signal, ...(conditional.signal ? [conditional.signal] : [])]),
      redirect: 'manual',
    });
  } catch (err) {
    throw new EstateError('io', `cannot reach ${target.url}: ${reasonOf(err)}`);
  }
  refuseRedirect(response, target, url, route);
  if (response.status === 304 && conditional.etag !== undefined) {
    void response.body?.cancel().catch(() => {});
    return { status: 304, body: undefined, etag: conditional.etag };
  }
  const text = await readAnswer(response, target, abort);
  let body: unknown = undefined;
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  if (response.ok) return { status: response.status, body, etag: response.headers.get('etag') ?? undefined };
  const detail = (body as { detail?: unknown } | undefined)?.detail;
  const code = CODE_BY_STATUS.get(response.status) ?? 'io';
  if (code === 'validation' && Array.isArray(detail)) {
    const issues = detail as ValidationIssue[];
    const first = issues[0];
    throw new EstateError('validation', first ? `${first.loc.join('.')}: ${first.msg}` : 'invalid input', { issues });
  }
  if (code === 'forbidden') throw refusalError(target, typeof detail === 'string' ? detail : undefined);
  const message = typeof detail === 'string' ? detail : `HTTP ${response.status} ${response.statusText}`;
  throw new EstateError(code, `${target.url}: ${message}`);
}

function ensureSlash(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}
