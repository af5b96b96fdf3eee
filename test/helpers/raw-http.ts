import net from 'node:net';
import { PATIENCE_MS } from './wait-until.ts';

// HTTP/1.1 on a bare socket, for requests fetch would refuse or normalise
// (odd paths and methods, broken framing, raw bytes) and for responses that
// never reach a handler (the server's raw 400/408/431).

export interface RawResponse {
  status: number;
  /** Header names in lower case; repeated headers joined with ', '. */
  headers: Record<string, string>;
  body: Buffer;
}

export interface RawOptions {
  /** The request was HEAD: the response has no body whatever its headers say. */
  head?: boolean;
  /** Fail when no complete response arrived in this time (default PATIENCE_MS). */
  timeoutMs?: number;
}

/**
 * Sends `request` (the exact bytes) to `url`'s host and port on a fresh
 * connection and resolves with the first final response (1xx skipped), or
 * undefined when the server closed without one. An event stream resolves as
 * soon as its headers arrive. The socket is destroyed either way.
 */
export function rawRequest(url: string, request: string | Buffer, options: RawOptions = {}): Promise<RawResponse | undefined> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    let data = Buffer.alloc(0);
    let settled = false;
    const finish = (result: RawResponse | undefined, error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve(result);
    };
    const timer = setTimeout(
      () => finish(undefined, new Error(`no complete response within ${options.timeoutMs ?? PATIENCE_MS} ms; got ${JSON.stringify(data.toString('latin1').slice(0, 500))}`)),
      options.timeoutMs ?? PATIENCE_MS,
    );
    socket.on('error', () => finish(parseResponse(data, options, true)));
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      const response = parseResponse(data, options, false);
      if (response) finish(response);
    });
    socket.on('close', () => finish(parseResponse(data, options, true)));
    socket.write(request);
  });
}

/** The response in `data` once it is complete (or, at `ended`, whatever came), else undefined. */
export function parseResponse(data: Buffer, options: RawOptions, ended: boolean): RawResponse | undefined {
  let start = 0;
  for (;;) {
    const end = data.indexOf('\r\n\r\n', start);
    if (end === -1) return undefined;
    const lines = data.subarray(start, end).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1]);
    if (!Number.isInteger(status)) return undefined;
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon === -1) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    const bodyStart = end + 4;
    if (status >= 100 && status < 200) {
      start = bodyStart;
      continue;
    }
    const rest = data.subarray(bodyStart);
    if (options.head || status === 204 || status === 304 || (headers['content-type'] ?? '').startsWith('text/event-stream')) {
      return { status, headers, body: Buffer.alloc(0) };
    }
    if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      if (rest.length >= length) return { status, headers, body: rest.subarray(0, length) };
      return ended ? { status, headers, body: rest } : undefined;
    }
    if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
      const body = dechunk(rest);
      if (body) return { status, headers, body };
      return ended ? { status, headers, body: rest } : undefined;
    }
    return ended ? { status, headers, body: rest } : undefined;
  }
}

function dechunk(data: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = data.indexOf('\r\n', at);
    if (eol === -1) return undefined;
    const size = parseInt(data.subarray(at, eol).toString('latin1'), 16);
    if (!Number.isFinite(size)) return undefined;
    if (size === 0) return Buffer.concat(parts);
    if (data.length < eol + 2 + size + 2) return undefined;
    parts.push(data.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

/** A request's bytes: `Host` and `Connection: close` added, `Content-Length` set when a body is given. */
export function buildRequest(method: string, target: string, headers: [string, string][] = [], body?: Buffer | string): Buffer {
  const payload = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  const all: [string, string][] = [['Host', '127.0.0.1'], ...headers, ['Connection', 'close']];
  if (payload !== undefined && !all.some(([n]) => /^(content-length|transfer-encoding)$/i.test(n))) all.push(['Content-Length', String(payload.length)]);
  const head = `${method} ${target} HTTP/1.1\r\n${all.map(([n, v]) => `${n}: ${v}\r\n`).join('')}\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), payload ?? Buffer.alloc(0)]);
}
