import type { IncomingMessage, ServerResponse } from 'node:http';

/** How much more of a refused body is read, and for how long, before the connection closes anyway. */
export const DRAIN_MAX_BYTES = 64 * 1024 * 1024;
export const DRAIN_MAX_MS = 10_000;

export interface DrainLimits {
  maxBytes?: number;
  maxMs?: number;
}

/**
 * Answers a request whose body is refused before it was read (413) so that
 * the client gets to read the answer: the whole answer is written at once
 * with `Connection: close`, then the rest of the body is read and discarded,
 * at most `maxBytes` of it for at most `maxMs`, and only then does the
 * response end and the connection close. Closing while the client still sends
 * would reset the connection, and a client that sends its whole body before
 * reading (most do) would see ECONNRESET or EPIPE instead of the answer.
 */
export function sendThenDrain(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  payload: string,
  headers: Record<string, string>,
  limits: DrainLimits = {},
): void {
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(payload, 'utf8')),
    'Cache-Control': 'no-store',
    Connection: 'close',
  });
  res.write(req.method === 'HEAD' ? '' : payload);
  const maxBytes = limits.maxBytes ?? DRAIN_MAX_BYTES;
  let drained = 0;
  const onData = (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > maxBytes) finish();
  };
  const finish = () => {
    clearTimeout(timer);
    req.off('data', onData);
    req.off('end', finish);
    if (!res.writableEnded) res.end();
  };
  const timer = setTimeout(finish, limits.maxMs ?? DRAIN_MAX_MS);
  timer.unref();
  if (req.complete) return finish();
  req.on('data', onData);
  req.once('end', finish);
  res.once('close', finish);
  req.resume();
}
