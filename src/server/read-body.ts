import type { IncomingMessage } from 'node:http';
import { EstateError } from '../errors.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth.ts';

export const MAX_BODY_BYTES = 1024 * 1024;

/** The request body as JSON. Over 1 MiB → 413; not JSON, or nested deeper than 64 levels → 422 `json_invalid`; empty → undefined. */
export async function readJsonBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<unknown> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    throw new EstateError('payload_too_large', `request body is larger than ${limit} bytes`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      req.resume();
      throw new EstateError('payload_too_large', `request body is larger than ${limit} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text.trim()) return undefined;
  if (nestsDeeperThan(text)) {
    throw new EstateError('validation', 'body is nested too deeply', {
      issues: [{ loc: ['body'], msg: `JSON decode error: nested deeper than ${MAX_JSON_DEPTH} levels`, type: 'json_invalid' }],
    });
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new EstateError('validation', 'body is not valid JSON', {
      issues: [{ loc: ['body'], msg: `JSON decode error: ${(err as Error).message}`, type: 'json_invalid' }],
    });
  }
}
