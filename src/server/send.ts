import * as crypto from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isSharedRecord } from '../core/jsonl/shared-records.ts';
import { EstateError, errorBody } from '../errors.ts';
import { sendThenDrain } from './drain-request.ts';
import { jsonText } from './json-text.ts';
import { noteRefusal } from './overload-refusals.ts';
import { SECURITY_HEADERS } from './security-headers.ts';
import type { UnsentBudget } from './unsent-budget.ts';

// Every response carries the security headers and its request id. Raw routes
// get them from the request pipeline (src/server/handler.ts) with setHeader
// before they run; an operation's answer gets them here, in the one
// writeHead that sends its headers, when it is given its request `id`.

const SECURITY_NAMES = Object.keys(SECURITY_HEADERS);
const SECURITY_VALUES = Object.values(SECURITY_HEADERS);

/** The headers of an answer, in the order they go out: the security headers and the request id first when `id` is given. */
function answerHeaders(id: string | undefined, contentType: string, length: number, headers: Record<string, string> | undefined): Record<string, string> {
  // Built by assignment: object spread here cost more than the rest of the request.
  const all: Record<string, string> = {};
  if (id !== undefined) {
    for (let i = 0; i < SECURITY_NAMES.length; i++) all[SECURITY_NAMES[i] as string] = SECURITY_VALUES[i] as string;
    all['X-Request-Id'] = id;
  }
  all['Content-Type'] = contentType;
  all['Content-Length'] = String(length);
  all['Cache-Control'] = 'no-store';
  if (headers !== undefined) for (const name in headers) all[name] = headers[name] as string;
  return all;
}

export function sendText(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  contentType: string,
  body: string | Buffer,
  headers?: Record<string, string>,
  id?: string,
): void {
  writeAnswer(req, res, status, contentType, body, typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.length, headers, id);
}

function writeAnswer(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  contentType: string,
  body: string | Buffer,
  length: number,
  headers: Record<string, string> | undefined,
  id: string | undefined,
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, answerHeaders(id, contentType, length, headers));
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
 * With `id`, the answer also carries the security headers and `X-Request-Id`
 * (an operation's answer; see above). With `budget`, a large answer counts
 * against `client`'s share of unsent bytes and the whole (see UnsentBudget).
 * Returns the bytes of body sent: 0 for a 304, a HEAD or a refusal.
 */
export function sendJson(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  body: unknown,
  headers?: Record<string, string>,
  budget?: UnsentBudget,
  volatile: readonly string[] = [],
  id?: string,
  client?: string,
): number {
  if (status === 204) {
    sendText(req, res, status, 'application/json', '', headers, id);
    return 0;
  }
  const payload = jsonText(body);
  if (status !== 200 || (req.method !== 'GET' && req.method !== 'HEAD')) return sendWithin(budget, client, req, res, status, payload, headers, id);
  const etag = volatile.length && isRecord(body) ? `W/${tagOf(JSON.stringify(withoutFields(body, volatile)))}` : sharedTag(body, payload);
  const cached: Record<string, string> = { ETag: etag, 'Cache-Control': 'private, no-cache' };
  if (headers !== undefined) for (const name in headers) cached[name] = headers[name] as string;
  if (matchesEtag(req.headers['if-none-match'], etag)) {
    writeAnswer(req, res, 304, 'application/json', '', 0, cached, id);
    return 0;
  }
  return sendWithin(budget, client, req, res, status, payload, cached, id);
}

/** Sends `payload` if `budget` has room for it (see UnsentBudget), else 503 or 429 with `Retry-After`; returns the bytes of body sent. */
function sendWithin(
  budget: UnsentBudget | undefined,
  client: string | undefined,
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  payload: string,
  headers: Record<string, string> | undefined,
  id: string | undefined,
): number {
  const length = Buffer.byteLength(payload, 'utf8');
  if (req.method === 'HEAD') {
    writeAnswer(req, res, status, 'application/json', payload, length, headers, id);
    return 0;
  }
  const refusal = budget?.refusal(length, client);
  if (refusal) {
    noteRefusal(res, refusal);
    sendText(req, res, refusal.status, 'application/json', JSON.stringify(errorBody(refusal)), refusal.headers ?? {}, id);
    return 0;
  }
  writeAnswer(req, res, status, 'application/json', payload, length, headers, id);
  budget?.hold(res, length, client);
  return length;
}

/** `If-None-Match` holds `*` or a list of tags; the comparison is weak (RFC 9110 section 13.1.2): `W/` is ignored on both sides. */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === opaque);
}

/** crypto.hash (Node 20.12+) hashes in one call, at half the cost of a Hash object. */
const sha1 = typeof crypto.hash === 'function' ? (text: string) => crypto.hash('sha1', text, 'base64url') : (text: string) => crypto.createHash('sha1').update(text).digest('base64url');

function tagOf(text: string): string {
  return `"${sha1(text)}"`;
}

/** Tags of shared (frozen) answers, which cannot change: a page read again is not hashed again. */
const sharedTags = new WeakMap<object, string>();

function sharedTag(body: unknown, payload: string): string {
  if (!isSharedRecord(body)) return tagOf(payload);
  let tag = sharedTags.get(body as object);
  if (tag === undefined) {
    tag = tagOf(payload);
    sharedTags.set(body as object, tag);
  }
  return tag;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function withoutFields(body: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const rest: Record<string, unknown> = {};
  for (const key in body) if (!fields.includes(key)) rest[key] = body[key];
  return rest;
}

export function sendError(req: IncomingMessage, res: ServerResponse, err: EstateError, body: unknown, id?: string): void {
  noteRefusal(res, err);
  // A body refused unread (413): the client may still be sending it; answer, then read the rest before closing.
  if (err.status === 413 && !req.complete && !res.headersSent) {
    const headers = id === undefined ? (err.headers ?? {}) : { ...SECURITY_HEADERS, 'X-Request-Id': id, ...err.headers };
    return sendThenDrain(req, res, err.status, JSON.stringify(body), headers);
  }
  sendJson(req, res, err.status, body, err.headers, undefined, [], id);
}
