import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { redactCredentialShapes } from './credential-shapes.ts';

/** One line of the access log. */
export interface AccessLine {
  /** When the request arrived, ISO 8601 UTC. */
  time: string;
  level: 'info';
  event: 'request';
  /** The request id, also sent as `X-Request-Id`. */
  id: string;
  method: string;
  /** The path and query as sent, with the value of every `api_key` replaced; at most 2048 characters. */
  path: string;
  /** null when the connection closed before a response began. */
  status: number | null;
  duration_ms: number;
  /** The credential's user, when the request carried a valid one for its route. */
  user: string | null;
  client: string | null;
  /** Present (true) when the connection closed before the response was complete. */
  aborted?: true;
}

/** What the request pipeline learns along the way and the access log reports. */
export interface AccessNote {
  user: string | null;
}

const MAX_PATH = 2048;

/**
 * Writes one access line for `req` to `log` when its response is done or
 * its connection closes, whichever comes first; returns the note the pipeline
 * fills in (the user). Never logs a header, a body or a credential.
 */
export function logAccess(req: IncomingMessage, res: ServerResponse, id: string, log: (line: AccessLine) => void): AccessNote {
  const time = new Date().toISOString();
  const started = performance.now();
  const note: AccessNote = { user: null };
  // Read now: by the time the response closes, the socket may be detached from the request.
  const client = req.socket?.remoteAddress ?? null;
  res.once('close', () => {
    const line: AccessLine = {
      time,
      level: 'info',
      event: 'request',
      id,
      method: req.method ?? '',
      path: loggedPath(req.url ?? ''),
      status: res.headersSent ? res.statusCode : null,
      duration_ms: Math.round((performance.now() - started) * 10) / 10,
      user: note.user,
      client,
    };
    if (!res.writableFinished) line.aborted = true;
    log(line);
  });
  return note;
}

/**
 * The request target with each `api_key` value (in any spelling the query
 * parser would decode to `api_key`) replaced by `REDACTED`, and anything
 * shaped like an API key or an access token wherever it stands; cut to 2048
 * characters.
 */
export function loggedPath(url: string): string {
  const q = url.indexOf('?');
  const target = redactCredentialShapes(q === -1 ? url : `${url.slice(0, q)}?${redactQuery(url.slice(q + 1))}`);
  return target.length > MAX_PATH ? `${target.slice(0, MAX_PATH - 1)}…` : target;
}

function redactQuery(query: string): string {
  return query
    .split('&')
    .map((pair) => {
      // The very parser that finds the credential decides what is one.
      if (!new URLSearchParams(pair).has('api_key')) return pair;
      const eq = pair.indexOf('=');
      return `${eq === -1 ? pair : pair.slice(0, eq)}=REDACTED`;
    })
    .join('&');
}
