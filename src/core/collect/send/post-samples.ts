import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { fetchFailure } from '../../fetch-failure.ts';
import type { SeriesSample } from '../../store/store.ts';

/** A hub the collector sends to: its address, and the API key sent as `X-API-Key`. */
export interface HubTarget {
  url: string;
  apiKey?: string | undefined;
  /** How long one request may take before it counts as the hub unreachable. Default 30 s. */
  timeoutMs?: number;
}

/** One problem of a refused body, as HTTPValidationError gives it. */
export interface IngestIssue {
  loc: (string | number)[];
  msg: string;
}

/**
 * What the hub did with one `POST /ingest`:
 * - `stored`: 2xx, every sample taken (stored now or known before);
 * - `refused`: 422, a sample the hub will not take (`issues` name it);
 * - `too_large`: 413, the body is over the hub's limit;
 * - `denied`: any other 4xx but 429 (a wrong key: 401/403; no /ingest there: 404);
 * - `unavailable`: no answer, 429 or 5xx: try again later (`retryAfterMs` from Retry-After).
 */
export type IngestAnswer =
  | { kind: 'stored'; stored: number; duplicates: number }
  | { kind: 'refused'; issues: IngestIssue[]; message: string }
  | { kind: 'too_large'; message: string }
  | { kind: 'denied'; status: number; message: string }
  | { kind: 'unavailable'; status?: number; retryAfterMs?: number; message: string };

/** The most of an answer read: the hub's answers to /ingest are small. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * Sends `samples` (oldest first) to the hub's `POST /ingest` as
 * `{"samples": [...]}` (DESIGN.md 7a) and says what came of it; never
 * throws for what the network or the hub did. A redirect is not followed
 * (a key is never sent on to another address): it is `denied`.
 */
export async function postSamples(target: HubTarget, samples: readonly SeriesSample[], signal?: AbortSignal): Promise<IngestAnswer> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json' };
  if (target.apiKey) headers['X-API-Key'] = target.apiKey;
  const url = new URL('ingest', target.url.endsWith('/') ? target.url : `${target.url}/`);
  let response: { status: number; headers: { get(name: string): string | null } };
  let text: string;
  try {
    const timeout = AbortSignal.timeout(target.timeoutMs ?? 30_000);
    const answer = await post(url, headers, JSON.stringify({ samples }), signal ? AbortSignal.any([signal, timeout]) : timeout);
    response = answer;
    text = answer.text;
  } catch (err) {
    return { kind: 'unavailable', message: `cannot reach ${target.url}: ${fetchFailure(err).reason}` };
  }
  const { status } = response;
  const body = parseJson(text) as { stored?: unknown; duplicates?: unknown; detail?: unknown } | undefined;
  if (status >= 200 && status < 300) {
    const count = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) ? n : 0);
    return { kind: 'stored', stored: count(body?.stored), duplicates: count(body?.duplicates) };
  }
  const detail = typeof body?.detail === 'string' ? body.detail : undefined;
  const message = `${target.url} answered ${status}${detail ? `: ${detail}` : ''}`;
  if (status === 429 || status >= 500) return { kind: 'unavailable', status, message, ...retryAfter(response.headers.get('retry-after')) };
  if (status === 413) return { kind: 'too_large', message };
  if (status === 422) {
    const issues = Array.isArray(body?.detail) ? (body.detail as unknown[]).filter(isIssue) : [];
    const first = issues[0];
    return { kind: 'refused', issues, message: first ? `${target.url} refused a sample: ${first.loc.join('.')}: ${first.msg}` : message };
  }
  if (status >= 300 && status < 400) return { kind: 'denied', status, message: `${target.url} answered ${status}, a redirect (not followed): give the hub's own address` };
  return { kind: 'denied', status, message };
}

/** One POST with node:http(s): the status, the headers and at most MAX_ANSWER_BYTES of the body. */
function post(url: URL, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<{ status: number; headers: { get(name: string): string | null }; text: string }> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(url, { method: 'POST', headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) }, signal }, (res) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        if (bytes < MAX_ANSWER_BYTES) chunks.push(chunk);
        bytes += chunk.length;
      });
      res.on('end', () => {
        const get = (name: string) => {
          const v = res.headers[name.toLowerCase()];
          return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
        };
        resolve({ status: res.statusCode ?? 0, headers: { get }, text: Buffer.concat(chunks).subarray(0, MAX_ANSWER_BYTES).toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isIssue(value: unknown): value is IngestIssue {
  const v = value as Partial<IngestIssue> | null;
  return typeof v === 'object' && v !== null && Array.isArray(v.loc) && typeof v.msg === 'string';
}

/** Retry-After in seconds or as an HTTP date, in ms from now; nothing when absent or unreadable. */
function retryAfter(header: string | null): { retryAfterMs?: number } {
  if (header === null) return {};
  const seconds = Number(header);
  if (header.trim() !== '' && Number.isFinite(seconds) && seconds >= 0) return { retryAfterMs: seconds * 1000 };
  const at = Date.parse(header);
  return Number.isNaN(at) ? {} : { retryAfterMs: Math.max(0, at - Date.now()) };
}
