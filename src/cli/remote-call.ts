import type { Operation } from '../api/define-operation.ts';
import type { RawInput } from '../api/parse-input.ts';
import type { OperationResult } from '../api/run-operation.ts';
import { ERROR_CODES, EstateError, type ErrorCode, type ValidationIssue } from '../errors.ts';

const CODE_BY_STATUS = new Map<number, ErrorCode>(
  (Object.entries(ERROR_CODES) as [ErrorCode, { status: number }][])
    .filter(([code]) => code !== 'io' && code !== 'usage')
    .map(([code, { status }]) => [status, code]),
);

export interface RemoteTarget {
  url: string;
  apiKey: string | undefined;
  timeoutMs?: number;
}

/**
 * Calls an operation on a remote estate server. A success answers like a
 * local call; an error status becomes the EstateError the server raised, so
 * the CLI prints the same message and exits with the same code.
 */
export async function remoteCall(op: Operation, target: RemoteTarget, raw: RawInput): Promise<OperationResult> {
  let path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(raw.path?.[name] ?? ''));
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(raw.query ?? {})) if (v !== undefined) query.set(k, v);
  if ([...query].length) path += `?${query}`;
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (target.apiKey) headers['X-API-Key'] = target.apiKey;
  if (raw.body !== undefined) headers['Content-Type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(new URL(path.replace(/^\//, ''), ensureSlash(target.url)), {
      method: op.method,
      headers,
      body: raw.body === undefined ? null : JSON.stringify(raw.body),
      signal: AbortSignal.timeout(target.timeoutMs ?? 30_000),
    });
  } catch (err) {
    const reason = (err as Error).name === 'TimeoutError' ? 'timed out' : ((err as { cause?: Error }).cause?.message ?? (err as Error).message);
    throw new EstateError('io', `cannot reach ${target.url}: ${reason}`);
  }
  const text = await response.text();
  let body: unknown = undefined;
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  if (response.ok) return { status: response.status, body };
  const detail = (body as { detail?: unknown } | undefined)?.detail;
  const code = CODE_BY_STATUS.get(response.status) ?? 'io';
  if (code === 'validation' && Array.isArray(detail)) {
    const issues = detail as ValidationIssue[];
    const first = issues[0];
    throw new EstateError('validation', first ? `${first.loc.join('.')}: ${first.msg}` : 'invalid input', { issues });
  }
  const message = typeof detail === 'string' ? detail : `HTTP ${response.status} ${response.statusText}`;
  throw new EstateError(code, `${target.url}: ${message}`);
}

function ensureSlash(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}
