import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ListenOptions {
  host: string;
  port: number;
  /** How long in-flight requests may run on shutdown before their sockets are cut. */
  drainMs?: number;
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
  const server = createServer({ requestTimeout: 30_000, headersTimeout: 10_000, keepAliveTimeout: 5_000 }, (req, res) => {
    void handler(req, res);
  });
  server.maxHeadersCount = 100;
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
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
