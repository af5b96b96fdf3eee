import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { hasCredentialShape } from './credential-shapes.ts';

/** An incoming `X-Request-Id` is kept when it looks like an id; anything else is replaced. */
const SANE_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The id rides on the request itself: a WeakMap entry per request cost more. */
const ID = Symbol('estate.requestId');
type WithId = IncomingMessage & { [ID]?: string };

/**
 * The request's id: its `X-Request-Id` when that is 1–128 characters of
 * `[A-Za-z0-9._-]` (so a proxy's id follows the request through) and not
 * shaped like a credential (it is logged), else a new UUID. The same request
 * always gets the same id.
 */
export function requestId(req: IncomingMessage): string {
  let id = (req as WithId)[ID];
  if (id === undefined) {
    const sent = req.headers['x-request-id'];
    id = typeof sent === 'string' && SANE_ID.test(sent) && !hasCredentialShape(sent) ? sent : randomUUID();
    (req as WithId)[ID] = id;
  }
  return id;
}
