import assert from 'node:assert/strict';
import type net from 'node:net';
import { test } from 'node:test';
import { FEED_MAX_BYTES } from '../src/api/operations/work.ts';
import { bigFeedDir as bigLog, nonReader } from './helpers/big-feed.ts';
import { startServer } from './helpers/server.ts';
import { PATIENCE_MS, waitUntil } from './helpers/wait-until.ts';

// Clients that ask for a large answer and never read it hold neither memory
// nor connection slots for long: an answer that does not drain within
// serve.timeouts.send_ms is cut; past serve.max_unsent_bytes of unread
// answers, a large answer is 503 while small ones (health checks) still go
// out; and the public feed is at most 1 MiB whatever its limit.

/** True when a request to /healthz on a new connection is answered 200 (false when the connection is refused or cut). */
async function healthy(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(PATIENCE_MS) })).status === 200;
  } catch {
    return false;
  }
}

// The kernel buffers a few MB per loopback connection: each non-reader asks
// for the feed many times over one connection (pipelined) so that some of
// its answers wait in the server, as one answer larger than those buffers would.
const TIMES = 16;

test('the public feed carries at most 1 MiB of completions and says when it stopped short of its limit', async (t) => {
  const dir = await bigLog(t, {});
  const server = await startServer(t, dir);
  const r = await server.get('/work/feed?limit=1000');
  assert.equal(r.status, 200);
  assert.equal(r.json.truncated, true);
  assert.equal(r.json.limit, 1000);
  assert.ok(r.json.count > 0 && r.json.count < 400, `count ${r.json.count}`);
  assert.equal(r.json.items.length, r.json.count);
  assert.ok(Buffer.byteLength(JSON.stringify(r.json.items)) <= FEED_MAX_BYTES);
  assert.equal(r.json.items[0].id, `wc_${(399).toString(16).padStart(16, '0')}`, 'newest first, as always');
  const small = await server.get('/work/feed?limit=5');
  assert.equal(small.json.count, 5);
  assert.equal('truncated' in small.json, false, 'a page that fits says nothing of it');
});

test('answers that are never read are cut after send_ms, freeing every connection slot, while /healthz answers', async (t) => {
  // Long enough for this process, busy or not, to read a large answer it does read.
  const dir = await bigLog(t, { timeouts: { send_ms: 3000 }, max_connections: 4 });
  const lines: Record<string, unknown>[] = [];
  const server = await startServer(t, dir, { log: (line) => lines.push(line) });
  // Four clients: one client's unread answers would stop at its share (max_unsent_bytes_per_client), with 429s.
  for (let i = 0; i < 4; i++) await nonReader(t, server.url, '/work/feed?limit=1000', TIMES, `127.0.0.${i + 2}`);
  // Each connection is cut with an answer stuck: the request in progress then (the stuck answer's, or
  // one after it that waited for a slot behind its client's earlier ones) has an access line cut short.
  const cut = () => new Set(lines.filter((l) => l.event === 'request' && l.aborted === true).map((l) => l.client)).size;
  await waitUntil('the server has cut the connection of every client that does not read', () => cut() >= 4);
  assert.equal(await healthy(server.url), true, 'a new client gets a connection slot and an answer');
  const feed = await server.get('/work/feed?limit=1000');
  assert.equal(feed.status, 200);
});

test('past max_unsent_bytes of unread answers a large answer is 503 with Retry-After; small ones still go out', async (t) => {
  const dir = await bigLog(t, { timeouts: { send_ms: 60_000 }, max_unsent_bytes: 64 * 1024 });
  const server = await startServer(t, dir);
  const readers: net.Socket[] = [];
  for (let i = 0; i < 2; i++) readers.push(await nonReader(t, server.url, '/work/feed?limit=1000', TIMES));
  let refused: Awaited<ReturnType<typeof server.get>> | undefined;
  await waitUntil(
    'a large answer is refused while unread ones are held',
    async () => {
      refused = await server.get('/work/feed?limit=1000');
      return refused.status === 503;
    },
  );
  assert.equal(refused?.headers.get('retry-after'), '1');
  assert.match(refused?.json.detail, /unread answers/);
  assert.equal((await server.get('/healthz')).status, 200);
  assert.equal((await server.get('/work/feed?limit=3')).status, 200, 'a small answer is not refused');

  for (const socket of readers) socket.destroy();
  await waitUntil('large answers go out again once the unread ones are gone', async () => (await server.get('/work/feed?limit=1000')).status === 200);
});
