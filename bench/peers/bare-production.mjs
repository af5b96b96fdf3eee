#!/usr/bin/env node
// The floor for estate's feature set: a plain node:http server (no
// dependencies) doing, for /healthz and /trends?limit=N, the per-request work
// `estate serve` does on every answer:
//
// - its four security headers, `Cache-Control`, and a request id
//   (`X-Request-Id`, a new UUID);
// - an ETag (SHA-1, base64url) of every 200 body, and 304 on a matching
//   `If-None-Match`;
// - token-bucket rate-limit bookkeeping per client (one bucket per address);
// - one JSON access line per request on stderr, gathered and written once
//   per turn of the event loop;
// - /trends?limit=N: the API key checked in constant time, `limit` checked
//   (1..1000), the newest N lines of DATA/trends.jsonl read backwards from the
//   end in 64 KiB chunks, each line parsed (lines that are not JSON objects
//   are skipped and counted), the answer `{items, count, limit,
//   skipped_lines}` serialised, newest first: estate's answer, byte for byte.
//
// Written plainly, as a careful engineer would without a framework; not
// tuned against estate. `--minimal` leaves out the production work (headers,
// id, ETag, rate limit, access log): the physical limit of node:http.
//
//   node bench/peers/bare-production.mjs --data DIR [--port 0] [--key bench-key] [--minimal]
//
// Prints `bare-production listening on http://127.0.0.1:PORT` once it listens.
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';

const args = { data: undefined, port: 0, key: process.env.ESTATE_API_KEY ?? 'bench-key', minimal: false };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--data') args.data = process.argv[++i];
  else if (a === '--port') args.port = Number(process.argv[++i]);
  else if (a === '--key') args.key = process.argv[++i];
  else if (a === '--minimal') args.minimal = true;
  else {
    process.stderr.write(`bare-production: unknown argument ${a}\n`);
    process.exit(2);
  }
}
if (!args.data) {
  process.stderr.write('bare-production: --data DIR is required\n');
  process.exit(2);
}
const production = !args.minimal;
const trendsFile = path.join(args.data, 'trends.jsonl');
const key = Buffer.from(args.key);

// ---- the newest lines of a file, read backwards -------------------------------

const CHUNK = 64 * 1024;
// The callback API, each call wrapped once: cheaper per call than a FileHandle of fs/promises.
const fopen = (file) => new Promise((resolve, reject) => fs.open(file, 'r', (err, fd) => (err ? reject(err) : resolve(fd))));
const fsize = (fd) => new Promise((resolve, reject) => fs.fstat(fd, (err, st) => (err ? reject(err) : resolve(st.size))));
const fread = (fd, buf, length, position) => new Promise((resolve, reject) => fs.read(fd, buf, 0, length, position, (err, n) => (err ? reject(err) : resolve(n))));
const fclose = (fd) => new Promise((resolve) => fs.close(fd, () => resolve()));

/** Up to `limit` JSON-object records from the end of `file`, newest first, and how many lines were not JSON objects. */
async function tail(file, limit) {
  const items = [];
  let skipped = 0;
  let fd;
  try {
    fd = await fopen(file);
  } catch (err) {
    if (err.code === 'ENOENT') return { items, skipped };
    throw err;
  }
  try {
    let position = await fsize(fd);
    let rest = null; // the start of a line read so far, which began in an earlier chunk
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
    while (position > 0 && items.length < limit) {
      const length = Math.min(CHUNK, position);
      position -= length;
      const chunk = Buffer.allocUnsafe(length);
      const bytesRead = await fread(fd, chunk, length, position);
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
    await fclose(fd);
  }
  return { items, skipped };
}

// ---- the production work -------------------------------------------------------

const SECURITY = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'X-Frame-Options': 'DENY',
};

// A bucket no benchmark run empties (estate's and Fastify's limits are not
// reached either): what is measured is the bookkeeping, not cheap 429s.
const BURST = 10_000_000;
const PER_MS = 1_000_000 / 60_000;
const buckets = new Map();

/** Takes a token of the client's bucket; false when it is empty. */
function allow(client) {
  const now = Date.now();
  const bucket = buckets.get(client);
  if (bucket === undefined) {
    buckets.set(client, { tokens: BURST - 1, at: now });
    return true;
  }
  bucket.tokens = Math.min(BURST, bucket.tokens + (now - bucket.at) * PER_MS);
  bucket.at = now;
  if (bucket.tokens < 1) return false;
  bucket.tokens -= 1;
  return true;
}

let pending = [];
function flush() {
  const lines = pending;
  pending = [];
  process.stderr.write(lines.join(''));
}

function send(req, res, status, body, started) {
  if (!production) {
    res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
    return;
  }
  const id = randomUUID();
  const headers = { ...SECURITY, 'X-Request-Id': id, 'Content-Type': 'application/json', 'Cache-Control': 'no-store' };
  if (status === 200) {
    const etag = `"${createHash('sha1').update(body).digest('base64url')}"`;
    headers['Cache-Control'] = 'private, no-cache';
    headers.ETag = etag;
    if (req.headers['if-none-match'] === etag) {
      status = 304;
      body = '';
    }
  }
  headers['Content-Length'] = Buffer.byteLength(body);
  res.writeHead(status, headers);
  res.end(body);
  const line = {
    time: new Date().toISOString(),
    level: 'info',
    event: 'request',
    id,
    method: req.method,
    path: req.url,
    status,
    duration_ms: Math.round((performance.now() - started) * 10) / 10,
    user: null,
    client: req.socket.remoteAddress ?? null,
  };
  if (pending.push(`${JSON.stringify(line)}\n`) === 1) setImmediate(flush);
}

const detail = (text) => JSON.stringify({ detail: text });

function keyOk(req) {
  const got = req.headers['x-api-key'];
  return typeof got === 'string' && got.length === key.length && timingSafeEqual(Buffer.from(got), key);
}

// ---- routes ------------------------------------------------------------------------

async function handle(req, res) {
  const started = performance.now();
  if (production && !allow(req.socket.remoteAddress ?? '')) return send(req, res, 429, detail('too many requests'), started);
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const pathname = q === -1 ? url : url.slice(0, q);
  if (pathname === '/healthz') {
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(req, res, 405, detail('Method Not Allowed'), started);
    return send(req, res, 200, '{"status":"ok"}', started);
  }
  if (pathname === '/trends') {
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(req, res, 405, detail('Method Not Allowed'), started);
    if (!keyOk(req)) return send(req, res, 403, detail('Invalid credential'), started);
    const raw = new URLSearchParams(q === -1 ? '' : url.slice(q + 1)).get('limit');
    const limit = raw === null ? 100 : /^\d{1,4}$/.test(raw) ? Number(raw) : NaN;
    if (!(limit >= 1 && limit <= 1000)) return send(req, res, 422, detail('limit must be an integer in 1..1000'), started);
    const { items, skipped } = await tail(trendsFile, limit);
    return send(req, res, 200, JSON.stringify({ items, count: items.length, limit, skipped_lines: skipped }), started);
  }
  return send(req, res, 404, detail('Not Found'), started);
}

const server = createServer((req, res) => {
  handle(req, res).catch((err) => {
    process.stderr.write(`${JSON.stringify({ level: 'error', error: String(err?.message ?? err) })}\n`);
    if (res.headersSent) res.destroy();
    else send(req, res, 500, detail('Internal Server Error'), performance.now());
  });
});
server.keepAliveTimeout = 5_000;
server.listen(args.port, '127.0.0.1', () => {
  process.stdout.write(`bare-production listening on http://127.0.0.1:${server.address().port} production=${production}\n`);
});
const stop = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
