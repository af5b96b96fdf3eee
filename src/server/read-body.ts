import type { IncomingMessage } from 'node:http';
import { EstateError } from '../errors.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth.ts';

export const MAX_BODY_BYTES = 1024 * 1024;

/** `application/json` or a `+json` type (`application/merge-patch+json`), any parameters (`; charset=utf-8`). */
const JSON_MEDIA_TYPE = /^application\/(?:[\w.-]+\+)?json[ \t]*(?:;|$)/i;

/** Whether the request carries body bytes (a length above 0, or a chunked body). */
function hasBody(req: IncomingMessage): boolean {
  return Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
}

/**
 * The request body as JSON, with the text it was parsed from. A body whose Content-Type is not JSON (or absent) → 415,
 * before any of it is read; over `limit` (1 MiB unless the operation says) → 413; not JSON, or nested deeper than
 * 64 levels → 422 `json_invalid`; empty → undefined.
 */
export async function readJson(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<{ body: unknown; text: string } | undefined> {
  if (hasBody(req) && !JSON_MEDIA_TYPE.test(req.headers['content-type'] ?? '')) {
    req.resume();
    throw new EstateError('unsupported_media_type', 'the request body must be JSON, sent with Content-Type: application/json');
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    throw new EstateError('payload_too_large', `request body is larger than ${limit} bytes`);
  }
  const text = (await readUpTo(req, limit)).toString('utf8');
  if (!text.trim()) return undefined;
  if (nestsDeeperThan(text)) {
    throw new EstateError('validation', 'body is nested too deeply', {
      issues: [{ loc: ['body'], msg: `JSON decode error: nested deeper than ${MAX_JSON_DEPTH} levels`, type: 'json_invalid' }],
    });
  }
  try {
    return { body: JSON.parse(text), text };
  } catch (err) {
    throw new EstateError('validation', 'body is not valid JSON', {
      issues: [{ loc: ['body'], msg: `JSON decode error: ${(err as Error).message}`, type: 'json_invalid' }],
    });
  }
}

/**
 * The body's bytes, or a 413 as soon as they pass `limit`. The request is
 * left flowing, not destroyed (as leaving a `for await` over it would): the
 * 413 is answered while the rest of the body is read (see sendThenDrain).
 */
function readUpTo(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (err: Error | undefined) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', settle);
      req.off('close', onClose);
      if (err) reject(err);
      else resolve(Buffer.concat(chunks));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) settle(new EstateError('payload_too_large', `request body is larger than ${limit} bytes`));
      else chunks.push(chunk);
    };
    const onEnd = () => settle(undefined);
    const onClose = () => settle(new Error('the client closed the connection before the end of its request body'));
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', settle);
    req.once('close', onClose);
  });
}
