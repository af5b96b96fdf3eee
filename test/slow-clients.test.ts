import assert from 'node:assert/strict';
import net from 'node:net';
import { test, type TestContext } from 'node:test';
import { DEMO_FIXTURE, tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';
import { waitUntil } from './helpers/wait-until.ts';

// Slow and idle clients cannot starve the others: hundreds of connections
// that send nothing, trickle their headers or body, or sit idle after a
// request are held while normal requests answer, and the server itself cuts
// each one at its timeout. Timeouts are short here (serve.timeouts) so the
// test ends soon, yet long enough that the connections opened first are
// still held when the last one and the normal requests are done, however busy
// the machine; nothing asserts how fast anything is.

const PER_KIND = Number(process.env.ESTATE_SLOW_CLIENTS ?? 75);

interface Held {
  kind: string;
  socket: net.Socket;
  /** What the server sent before it closed the connection. */
  received: string;
  closed: boolean;
}

function hold(t: TestContext, url: string, kind: string, start: (socket: net.Socket) => void): Promise<Held> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    const held: Held = { kind, socket, received: '', closed: false };
    t.after(() => socket.destroy());
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (held.received += chunk));
    socket.on('error', () => {});
    socket.on('close', () => (held.closed = true));
    socket.once('connect', () => {
      start(socket);
      resolve(held);
    });
    socket.once('error', reject);
  });
}

/** Writes `chunks` one every `everyMs` while the socket is open. */
function trickle(socket: net.Socket, chunks: Iterable<string>, everyMs: number): void {
  const it = chunks[Symbol.iterator]();
  const timer = setInterval(() => {
    const next = it.next();
    if (next.done || socket.destroyed) return clearInterval(timer);
    socket.write(next.value);
  }, everyMs);
  socket.on('close', () => clearInterval(timer));
}

function* forever(make: (i: number) => string): Generator<string> {
  for (let i = 0; ; i++) yield make(i);
}

test('hundreds of idle and trickling connections are held while normal requests answer, and the server cuts each at its timeout', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const key = await newKey(dir);
  const server = await startServer(t, dir, { listen: { timeouts: { headersMs: 6000, requestMs: 10_000, keepAliveMs: 6000 } } });
  const kinds: [string, (socket: net.Socket) => void][] = [
    ['silent', () => {}],
    ['trickling headers', (s) => {
      s.write('GET /trends HTTP/1.1\r\nHost: x\r\n');
      trickle(s, forever((i) => `X-Slow-${i}: y\r\n`), 200);
    }],
    ['trickling body', (s) => {
      s.write(`POST /work/complete HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"task_id":"`);
      trickle(s, forever(() => 'x'), 200);
    }],
    ['idle after a request', (s) => s.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')],
  ];
  const held: Held[] = [];
  for (const [kind, start] of kinds) {
    for (let i = 0; i < PER_KIND; i++) held.push(await hold(t, server.url, kind, start));
  }
  assert.equal(held.length, PER_KIND * kinds.length);

  const normal = await Promise.all(
    Array.from({ length: 30 }, (_, i) => (i % 2 ? server.get('/healthz') : server.get('/trends?limit=3', { 'X-API-Key': key }))),
  );
  assert.deepEqual(new Set(normal.map((r) => r.status)), new Set([200]), 'normal requests answer while the slow ones are held');
  assert.ok(held.filter((h) => !h.closed).length > PER_KIND, 'the slow connections were still open meanwhile');

  await waitUntil('the server has closed every slow connection', () => held.every((h) => h.closed));
  const statusOf = (h: Held) => /^HTTP\/1\.1 (\d{3})/.exec(h.received)?.[1] ?? 'none';
  for (const [kind] of kinds) {
    const statuses = new Set(held.filter((h) => h.kind === kind).map(statusOf));
    const expected = kind === 'idle after a request' ? '200' : '408';
    assert.deepEqual(statuses, new Set([expected]), kind);
  }
  const timedOut = held.find((h) => h.kind === 'trickling headers') as Held;
  assert.match(timedOut.received, /\r\n\r\n\{"detail":"Request Timeout"\}$/, 'a 408 with the usual error body');
  assert.match(timedOut.received, /X-Content-Type-Options: nosniff/);
  assert.equal((await server.get('/healthz')).status, 200, 'and the server still answers');
});

test('beyond max_connections a new connection is closed at once; once the others go, the server answers again', async (t) => {
  const dir = await tempDataDir(t);
  const server = await startServer(t, dir, { listen: { maxConnections: 20, timeouts: { headersMs: 1000, requestMs: 2000, keepAliveMs: 500 } } });
  const held: Held[] = [];
  for (let i = 0; i < 20; i++) held.push(await hold(t, server.url, 'silent', () => {}));
  const extra = await hold(t, server.url, 'one too many', (s) => s.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'));
  await waitUntil('the extra connection is closed', () => extra.closed);
  assert.equal(extra.received, '', 'it got no answer');
  await waitUntil('the silent connections time out', () => held.every((h) => h.closed));
  assert.equal((await server.get('/healthz')).status, 200);
});
