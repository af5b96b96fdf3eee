import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { redactCredentialShapes } from './credential-shapes.ts';

/** One line of the access log. */
export type AccessLine = {
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
};

/** What the request pipeline learns along the way (the user) and the access log reports. */
export class AccessNote {
  user: string | null = null;
  /** When the request arrived, ISO 8601 UTC. */
  readonly time = new Date().toISOString();
  readonly started = performance.now();
  readonly req: IncomingMessage;
  readonly id: string;
  readonly log: (line: AccessLine) => void;
  /** Read now: by the time the response closes, the socket may be detached from the request. */
  readonly client: string | null;

  constructor(req: IncomingMessage, id: string, log: (line: AccessLine) => void) {
    this.req = req;
    this.id = id;
    this.log = log;
    this.client = req.socket?.remoteAddress ?? null;
  }
}

const NOTE = Symbol('estate.accessNote');
type Noted = ServerResponse & { [NOTE]?: AccessNote };

const MAX_PATH = 2048;

/**
 * Writes one access line for `req` to `log` when its response is done or
 * its connection closes, whichever comes first; returns the note the pipeline
 * fills in (the user). Never logs a header, a body or a credential. The
 * response's one `close` listener is a function shared by all responses
 * (the note rides on the response), so a request costs no closure.
 */
export function logAccess(req: IncomingMessage, res: ServerResponse, id: string, log: (line: AccessLine) => void): AccessNote {
  const note = new AccessNote(req, id, log);
  (res as Noted)[NOTE] = note;
  res.on('close', onClose);
  return note;
}

/** Names the user of a request whose route decides it (a raw route: /mcp), for its access line. */
export function noteUser(res: ServerResponse, userId: string): void {
  const note = (res as Noted)[NOTE];
  if (note) note.user = userId;
}

function onClose(this: ServerResponse): void {
  const note = (this as Noted)[NOTE];
  if (note === undefined) return;
  (this as Noted)[NOTE] = undefined;
  const { req } = note;
  const line: AccessLine = {
    time: note.time,
    level: 'info',
    event: 'request',
    id: note.id,
    method: req.method ?? '',
    path: loggedPath(req.url ?? ''),
    status: this.headersSent ? this.statusCode : null,
    duration_ms: Math.round((performance.now() - note.started) * 10) / 10,
    user: note.user,
    client: note.client,
  };
  if (!this.writableFinished) line.aborted = true;
  note.log(line);
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
  // Only a pair holding `api_key` in clear or percent-encoded can decode to it.
  if (!query.includes('api_key') && !query.includes('%')) return query;
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
