#!/usr/bin/env node
// estate's /healthz and /trends?limit=N on Fastify 5, as a team would ship
// it with the features `estate serve` has: pino access logs on stderr, a UUID
// request id per request sent back as `X-Request-Id`, @fastify/helmet with
// estate's CSP, @fastify/etag (SHA-1) on answers, @fastify/rate-limit per
// client. /trends validates its query with a JSON schema, checks the API key
// in an `onRequest` hook, reads the newest N lines of DATA/trends.jsonl
// backwards from the end (64 KiB chunks), parses each, and returns estate's
// answer `{items, count, limit, skipped_lines}`, newest first. Benchmarks
// only.
//
//   node bench/peers/fastify-peer.mjs --data DIR [--port 0] [--key bench-key]
//
// Prints `fastify-peer listening on http://127.0.0.1:PORT` once it listens.
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { open } from 'node:fs/promises';
import path from 'node:path';
import etag from '@fastify/etag';
import helmet from '@fastify/helmet';
import rateLimit from '@fastify/rate-limit';
import Fastify from 'fastify';

const args = { data: undefined, port: 0, key: process.env.ESTATE_API_KEY ?? 'bench-key' };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--data') args.data = process.argv[++i];
  else if (a === '--port') args.port = Number(process.argv[++i]);
  else if (a === '--key') args.key = process.argv[++i];
  else {
    process.stderr.write(`fastify-peer: unknown argument ${a}\n`);
    process.exit(2);
  }
}
if (!args.data) {
  process.stderr.write('fastify-peer: --data DIR is required\n');
  process.exit(2);
}
const trendsFile = path.join(args.data, 'trends.jsonl');
const key = Buffer.from(args.key);

/** Up to `limit` JSON-object records from the end of `file`, newest first, and how many lines were not JSON objects. */
async function tail(file, limit) {
  const items = [];
  let skipped = 0;
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (err) {
    if (err.code === 'ENOENT') return { items, skipped };
    throw err;
  }
  const take = (buf, start, end) => {
    if (end <= start) return;
    let value;
    try {
      value = JSON.parse(buf.toString('utf8', start, end));
    } catch {
      skipped++;
      return;
    }
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) items.push(value);
    else skipped++;
  };
  try {
    let position = (await handle.stat()).size;
    let rest = null;
    while (position > 0 && items.length < limit) {
      const length = Math.min(64 * 1024, position);
      position -= length;
      const chunk = Buffer.allocUnsafe(length);
      const { bytesRead } = await handle.read(chunk, 0, length, position);
      const data = rest ? Buffer.concat([chunk.subarray(0, bytesRead), rest]) : chunk.subarray(0, bytesRead);
      let end = data.length;
      while (end > 0 && items.length < limit) {
        const nl = data.lastIndexOf(0x0a, end - 1);
        if (nl === -1) break;
        take(data, nl + 1, end);
        end = nl;
      }
      rest = end > 0 ? data.subarray(0, end) : null;
    }
    if (position === 0 && rest && items.length < limit) take(rest, 0, rest.length);
  } finally {
    await handle.close();
  }
  return { items, skipped };
}

const app = Fastify({ logger: { level: 'info' }, genReqId: () => randomUUID() });
await app.register(helmet, {
  contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"], baseUri: ["'none'"], formAction: ["'none'"] } },
});
await app.register(etag, { algorithm: 'sha1' });
await app.register(rateLimit, { max: 1_000_000, timeWindow: 60_000 });
app.addHook('onRequest', async (req, reply) => {
  reply.header('X-Request-Id', req.id);
});

async function requireKey(req, reply) {
  const got = req.headers['x-api-key'];
  if (typeof got !== 'string' || got.length !== key.length || !timingSafeEqual(Buffer.from(got), key)) {
    return reply.code(403).send({ detail: 'Invalid credential' });
  }
}

app.get('/healthz', {
  schema: { response: { 200: { type: 'object', properties: { status: { type: 'string' } } } } },
}, async (req, reply) => {
  reply.header('Cache-Control', 'private, no-cache');
  return { status: 'ok' };
});

app.get('/trends', {
  onRequest: requireKey,
  schema: {
    querystring: { type: 'object', properties: { limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } } },
    // No response schema: for free-form records (additionalProperties) fast-json-stringify
    // takes twice as long as the JSON.stringify Fastify uses without one.
  },
}, async (req, reply) => {
  const { limit } = req.query;
  const { items, skipped } = await tail(trendsFile, limit);
  reply.header('Cache-Control', 'private, no-cache');
  return { items, count: items.length, limit, skipped_lines: skipped };
});

await app.listen({ port: args.port, host: '127.0.0.1' });
process.stdout.write(`fastify-peer listening on http://127.0.0.1:${app.server.address().port}\n`);
const stop = () => app.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
