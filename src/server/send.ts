import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EstateError } from '../errors.ts';

/** Headers every response carries. */
export const BASE_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

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
  const payload = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  res.writeHead(status, {
    ...BASE_HEADERS,
    'Content-Type': contentType,
    'Content-Length': String(payload.length),
    'Cache-Control': 'no-store',
    ...headers,
  });
  res.end(req.method === 'HEAD' || status === 204 || status === 304 ? undefined : payload);
}

export function sendJson(req: IncomingMessage, res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (status === 204) return sendText(req, res, status, 'application/json', '', headers);
  sendText(req, res, status, 'application/json', JSON.stringify(body), headers);
}

export function sendError(req: IncomingMessage, res: ServerResponse, err: EstateError, body: unknown): void {
  sendJson(req, res, err.status, body, err.headers ?? {});
}
