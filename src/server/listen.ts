import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { ServeConfig } from '../config.ts';
import { SECURITY_HEADERS } from './security-headers.ts';
import { SendWatch } from './send-watch.ts';

export interface ListenOptions {
  host: string;
  port: number;
  /** How long in-flight requests may run on shutdown before their sockets are cut. */
  drainMs?: number;
  /**
   * How long a client may take to send its headers (default 10 s), its whole
   * request (30 s); how long an idle keep-alive connection stays (5 s); how
   * long bytes of an answer may wait for the client to take them (30 s)
   * before its connection is cut.
   */
  timeouts?: { headersMs?: number; requestMs?: number; keepAliveMs?: number; sendMs?: number };
  /** Connections beyond this many open ones are closed at once (default 1024). */
  maxConnections?: number;
  /** Told of every request refused before it reached the handler (malformed, too slow, headers too large); not of clients that hung up. */
  onClientError?: (line: ClientErrorLine) => void;
}

export interface ClientErrorLine {
  time: string;
  level: 'warn';
  event: 'client_error';
  id: string;
  status: number;
  code: string | null;
  client: string | null;
}

/** The listen options `serve` settings ask for. */
export function listenLimits(serve: ServeConfig): Pick<ListenOptions, 'timeouts' | 'maxConnections'> {
  const t = serve.timeouts;
  return {
    timeouts: { headersMs: t.headers_ms, requestMs: t.request_ms, keepAliveMs: t.keep_alive_ms, sendMs: t.send_ms },
    maxConnections: serve.max_connections,
  };
}

export interface RunningServer {
  server: Server;
  url: string;
  /** Stops accepting, lets in-flight requests finish (up to drainMs), then resolves. */
  close: () => Promise<void>;
}

/** Binds a request handler to a socket with timeouts suited to a small API server. */
export async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => unknown,
  options: ListenOptions,
): Promise<RunningServer> {
  const headersTimeout = options.timeouts?.headersMs ?? 10_000;
  const server = createServer(
    {
      requestTimeout: options.timeouts?.requestMs ?? 30_000,
      headersTimeout,
      keepAliveTimeout: options.timeouts?.keepAliveMs ?? 5_000,
      // How often the timeouts above are checked: often enough to honour a short one.
      connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(headersTimeout / 4))),
    },
    (req, res) => {
      sending.watch(res);
      void handler(req, res);
    },
  );
  const sending = new SendWatch(options.timeouts?.sendMs ?? 30_000);
  server.on('close', () => sending.stop());
  server.maxHeadersCount = 100;
  server.maxConnections = options.maxConnections ?? 1024;
  // An `Expect` other than 100-continue is ignored (RFC 9110 allows it) rather than answered 417 by Node, without our headers.
  server.on('checkExpectation', (req, res) => {
    sending.watch(res);
    void handler(req, res);
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const status = clientErrorStatus(err);
    if (status === undefined) {
      socket.destroy();
      return;
    }
    const started = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage?.headersSent === true;
    const id = randomUUID();
    options.onClientError?.({
      time: new Date().toISOString(),
      level: 'warn',
      event: 'client_error',
      id,
      status,
      code: err.code ?? null,
      client: socket.remoteAddress ?? null,
    });
    if (socket.writable && !started) socket.end(rawResponse(status, id));
    else socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= new Promise<void>((resolve) => {
      const cut = setTimeout(() => server.closeAllConnections(), options.drainMs ?? 10_000);
      cut.unref();
      server.close(() => {
        clearTimeout(cut);
        resolve();
      });
      server.closeIdleConnections();
    }));
  return { server, url: `http://${host}:${address.port}`, close };
}

/** The status to answer a request Node's parser refused with; undefined when the client is gone (nothing to answer). */
function clientErrorStatus(err: NodeJS.ErrnoException): number | undefined {
  if (err.code === 'ECONNRESET' || err.code === 'EPIPE') return undefined;
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 408;
  if (err.code === 'HPE_HEADER_OVERFLOW') return 431;
  return 400;
}

/** A complete response written straight to the socket: the usual JSON error body and headers, then close. */
function rawResponse(status: number, id: string): string {
  const body = JSON.stringify({ detail: STATUS_CODES[status] ?? 'Bad Request' });
  const headers: Record<string, string> = {
    ...SECURITY_HEADERS,
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(body)),
    'Cache-Control': 'no-store',
    'X-Request-Id': id,
    Connection: 'close',
  };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Bad Request'}\r\n${lines.join('')}\r\n${body}`;
}
