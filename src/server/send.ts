import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { EstateError, errorBody } from '../errors.ts';
import { sendThenDrain } from './drain-request.ts';
import type { UnsentBudget } from './unsent-budget.ts';

// The security headers every response carries are set once, by the request
// pipeline (src/server/handler.ts, SECURITY_HEADERS), before any route runs.

export function sendText(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  contentType: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // Built by assignment: object spread here cost more than the rest of the request.
  const all: Record<string, string> = {
    'Content-Type': contentType,
    'Content-Length': String(typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.length),
    'Cache-Control': 'no-store',
  };
  for (const name in headers) all[name] = headers[name] as string;
  res.writeHead(status, all);
  // A string body goes out in one write with the headers (a Buffer would take a writev of two).
  res.end(req.method === 'HEAD' || status === 204 || status === 304 ? undefined : body);
}

/**
 * Sends a JSON body. A 200 answer to GET or HEAD carries an `ETag` of its
 * bytes and `Cache-Control: private, no-cache`; a request whose
 * `If-None-Match` names that tag gets 304 with no body, so polling unchanged
 * data costs one hash and a few header bytes. The tag leaves out the
 * top-level `volatile` fields (a time of generation, an uptime): then it is
 * weak (`W/"…"`), the same while the data is, though those bytes differ.
 */
export function sendJson(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
  budget?: UnsentBudget,
  volatile: readonly string[] = [],
): void {
  if (status === 204) return sendText(req, res, status, 'application/json', '', headers);
  const payload = JSON.stringify(body);
  if (status !== 200 || (req.method !== 'GET' && req.method !== 'HEAD')) return sendWithin(budget, req, res, status, payload, headers);
  const etag = volatile.length && isRecord(body) ? `W/${tagOf(JSON.stringify(withoutFields(body, volatile)))}` : tagOf(payload);
  const cached = { ETag: etag, 'Cache-Control': 'private, no-cache', ...headers };
  if (matchesEtag(req.headers['if-none-match'], etag)) return sendText(req, res, 304, 'application/json', '', { ...cached, 'Content-Length': '0' });
  sendWithin(budget, req, res, status, payload, cached);
}

/** Sends `payload` if `budget` has room for it (see UnsentBudget), else 503 with `Retry-After`. */
function sendWithin(budget: UnsentBudget | undefined, req: IncomingMessage, res: ServerResponse, status: number, payload: string, headers: Record<string, string>): void {
  if (budget && req.method !== 'HEAD' && !budget.admit(res, Buffer.byteLength(payload, 'utf8'))) {
    const busy = new EstateError('unavailable', 'the server is holding too many unread answers; try again later', { headers: { 'Retry-After': '1' } });
    return sendText(req, res, busy.status, 'application/json', JSON.stringify(errorBody(busy)), busy.headers ?? {});
  }
  sendText(req, res, status, 'application/json', payload, headers);
}

/** `If-None-Match` holds `*` or a list of tags; the comparison is weak (RFC 9110 section 13.1.2): `W/` is ignored on both sides. */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === opaque);
}

function tagOf(text: string): string {
  return `"${createHash('sha1').update(text).digest('base64url')}"`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function withoutFields(body: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const rest: Record<string, unknown> = {};
  for (const key in body) if (!fields.includes(key)) rest[key] = body[key];
  return rest;
}

export function sendError(req: IncomingMessage, res: ServerResponse, err: EstateError, body: unknown): void {
  // A body refused unread (413): the client may still be sending it; answer, then read the rest before closing.
  if (err.status === 413 && !req.complete && !res.headersSent) return sendThenDrain(req, res, err.status, JSON.stringify(body), err.headers ?? {});
  sendJson(req, res, err.status, body, err.headers ?? {});
}
