import type { IncomingMessage, ServerResponse } from 'node:http';

/** What a browser page of an allowed origin may send (preflight answer). */
const ALLOWED_METHODS = 'GET, HEAD, POST, DELETE';
const ALLOWED_HEADERS = 'X-API-Key, Authorization, Content-Type, If-None-Match, Last-Event-ID, X-Request-Id';
/** What such a page may read of a response besides the CORS-safelisted headers. */
const EXPOSED_HEADERS = 'X-Request-Id, Retry-After, ETag, Allow';

/**
 * CORS for an allow-list of origins. With an empty list nothing is added:
 * browsers then keep other origins' pages from reading any response. With a
 * list, every response varies by `Origin`; one from an allowed origin gets
 * `Access-Control-Allow-Origin: <that origin>` (never `*`, never credentials).
 * Returns true when the request was a preflight from an allowed origin, now
 * answered 204; every other request goes on (a preflight from another origin
 * reaches the router, which answers 405 without CORS headers).
 */
export function applyCors(req: IncomingMessage, res: ServerResponse, origins: ReadonlySet<string>): boolean {
  if (origins.size === 0) return false;
  res.setHeader('Vary', 'Origin');
  const origin = req.headers.origin;
  if (typeof origin !== 'string' || !origins.has(origin)) return false;
  res.setHeader('Access-Control-Allow-Origin', origin);
  const preflight = req.method === 'OPTIONS' && typeof req.headers['access-control-request-method'] === 'string';
  if (!preflight) {
    res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    return false;
  }
  res.writeHead(204, {
    'Access-Control-Allow-Methods': ALLOWED_METHODS,
    'Access-Control-Allow-Headers': ALLOWED_HEADERS,
    'Access-Control-Max-Age': '600',
    'Content-Length': '0',
  });
  res.end();
  return true;
}
