import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { tempDataDir } from './helpers/data-dir.ts';
import { completionBody } from './helpers/records.ts';
import { newKey, startServer, type TestServer } from './helpers/server.ts';
import { openStream } from './helpers/sse.ts';
import { PATIENCE_MS, waitUntil } from './helpers/wait-until.ts';

// GET /work/stream: one client (its valid credential, else its address)
// holds at most serve.streams.per_client streams (one more is 429 with
// Retry-After), and a stream ends after serve.streams.max_lifetime_s with an
// `id:` line naming where to resume and a `retry:` delay; the client that
// reconnects with that Last-Event-ID misses nothing.

async function dataDir(t: TestContext, streams: object): Promise<string> {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ serve: { streams } }));
  return dir;
}

/** The status line's code of GET `target` (default /work/stream) on a connection from `localAddress` (the socket is kept open until the test ends). */
function streamStatusFrom(t: TestContext, url: string, localAddress: string, headers: Record<string, string> = {}, target = '/work/stream'): Promise<number> {
  const { port } = new URL(url);
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port: Number(port), host: '127.0.0.1', localAddress });
    t.after(() => socket.destroy());
    let head = '';
    socket.setEncoding('latin1');
    socket.on('error', reject);
    socket.on('data', (chunk: string) => {
      head += chunk;
      const m = /^HTTP\/1\.1 (\d{3})/.exec(head);
      if (m) resolve(Number(m[1]));
    });
    socket.once('connect', () => socket.write(`GET ${target} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n${lines.join('')}\r\n`));
  });
}

test('one address holds at most per_client streams; another address or a credential still gets one', async (t) => {
  const dir = await dataDir(t, { per_client: 2 });
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const first = await openStream(t, `${server.url}/work/stream`);
  const second = await openStream(t, `${server.url}/work/stream`);
  assert.deepEqual([first.status, second.status], [200, 200]);

  const refused = await server.get('/work/stream', { Accept: 'text/event-stream' });
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('retry-after'), '5');
  assert.match(refused.json.detail, /already has 2 open streams \(at most 2\)/);

  assert.equal(await streamStatusFrom(t, server.url, '127.0.0.2'), 200, 'another address is not held back');
  const keyed = await openStream(t, `${server.url}/work/stream`, { 'X-API-Key': key });
  assert.equal(keyed.status, 200, 'a valid credential counts on its own');
  const forged = await server.get('/work/stream', { Accept: 'text/event-stream', 'X-API-Key': 'est_forged_secret' });
  assert.equal(forged.status, 429, 'an invalid credential counts as its address');

  first.close();
  await waitUntil('a closed stream frees its slot', async () => {
    const again = await fetch(`${server.url}/work/stream`, { headers: { Accept: 'text/event-stream' }, signal: AbortSignal.timeout(PATIENCE_MS) });
    void again.body?.cancel();
    return again.status === 200;
  });
});

test('one credential holds at most per_client streams from any address and through any carrier; other clients are not held back', async (t) => {
  const dir = await dataDir(t, { per_client: 2 });
  const key = await newKey(dir, 'alice');
  const other = await newKey(dir, 'bob');
  const server = await startServer(t, dir);
  // Two streams of one key, from two addresses, through two carriers.
  const first = await openStream(t, `${server.url}/work/stream`, { 'X-API-Key': key });
  assert.equal(first.status, 200);
  assert.equal(await streamStatusFrom(t, server.url, '127.0.0.2', { Authorization: `Bearer ${key}` }), 200);

  // A third is refused wherever it comes from: the credential is the client, not the address.
  assert.equal(await streamStatusFrom(t, server.url, '127.0.0.3', {}, `/work/stream?api_key=${encodeURIComponent(key)}`), 429, 'a third address with ?api_key=');
  assert.equal(await streamStatusFrom(t, server.url, '127.0.0.4', { 'X-API-Key': key }), 429, 'a fourth address with X-API-Key');
  const refused = await server.get('/work/stream', { Accept: 'text/event-stream', 'X-API-Key': key });
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('retry-after'), '5');
  assert.match(refused.json.detail, /already has 2 open streams \(at most 2\)/);

  // The key's streams are not counted against the addresses they came from, nor against another key.
  const anonymous = [await openStream(t, `${server.url}/work/stream`), await openStream(t, `${server.url}/work/stream`)];
  assert.deepEqual(anonymous.map((s) => s.status), [200, 200], 'the address the key used still has its own slots');
  assert.equal(await streamStatusFrom(t, server.url, '127.0.0.2'), 200, 'so has the other address');
  const others = [await openStream(t, `${server.url}/work/stream`, { 'X-API-Key': other }), await openStream(t, `${server.url}/work/stream`, { 'X-API-Key': other })];
  assert.deepEqual(others.map((s) => s.status), [200, 200], 'another credential counts on its own');

  first.close();
  await waitUntil('a closed stream frees its credential\'s slot', async () => {
    const again = await fetch(`${server.url}/work/stream`, { headers: { Accept: 'text/event-stream', 'X-API-Key': key }, signal: AbortSignal.timeout(PATIENCE_MS) });
    void again.body?.cancel();
    return again.status === 200;
  });
});

/** Opens a stream (resolving once the server has it) and reads it to its end: the raw text. */
async function openRaw(url: string, headers: Record<string, string> = {}): Promise<{ text: Promise<string> }> {
  const response = await fetch(url, { headers: { Accept: 'text/event-stream', ...headers }, signal: AbortSignal.timeout(20_000) });
  assert.equal(response.status, 200);
  return { text: response.text() };
}

async function complete(server: TestServer, key: string, i: string): Promise<string> {
  const r = await server.request('POST', '/work/complete', { body: completionBody(i), headers: { 'X-API-Key': key } });
  assert.equal(r.status, 201);
  return r.json.id as string;
}

/** The `id:` and `retry:` of the last block of a stream that the server ended. */
function farewell(text: string): { id: string | undefined; retry: number } {
  const last = text.trimEnd().split('\n\n').at(-1) ?? '';
  const retry = /^retry: (\d+)$/m.exec(last);
  assert.ok(retry, `the stream ends with a retry: hint; got ${JSON.stringify(last)}`);
  return { id: /^id: (.+)$/m.exec(last)?.[1], retry: Number(retry[1]) };
}

test('a stream ends at max_lifetime_s naming where to resume; reconnecting with that Last-Event-ID loses nothing', async (t) => {
  const dir = await dataDir(t, { max_lifetime_s: 2 });
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const before = await complete(server, key, 'before');

  // A stream that carried an event: it resumes after that event.
  const stream = await openRaw(`${server.url}/work/stream`);
  const during = await complete(server, key, 'during');
  const text = await stream.text;
  assert.match(text, new RegExp(`id: ${during}\\n`));
  const end = farewell(text);
  assert.equal(end.id, during);
  assert.ok(end.retry > 0);

  const gap = await complete(server, key, 'gap');
  const resumed = await openStream(t, `${server.url}/work/stream`, { 'Last-Event-ID': end.id as string });
  const [replayed] = await resumed.waitForEvents(1);
  assert.equal(replayed?.id, gap, 'the completion recorded while disconnected is replayed, and nothing before it');
  resumed.close();

  // A stream that carried no event: it resumes from where it began, not from nothing.
  const quiet = farewell(await (await openRaw(`${server.url}/work/stream`)).text);
  assert.equal(quiet.id, gap);
  const later = await complete(server, key, 'later');
  const again = await openStream(t, `${server.url}/work/stream`, { 'Last-Event-ID': quiet.id as string });
  const [next] = await again.waitForEvents(1);
  assert.equal(next?.id, later);
  assert.notEqual(before, later);
});

test('the server holds at most serve.streams.max_open streams in all: one more is 503 with Retry-After, until one closes', async (t) => {
  const dir = await dataDir(t, { max_open: 3, per_client: 10 });
  const server = await startServer(t, dir);
  const open = await Promise.all([1, 2, 3].map((n) => streamStatusFrom(t, server.url, `127.0.0.${n + 10}`)));
  assert.deepEqual(open, [200, 200, 200]);
  const full = await server.get('/work/stream', { Accept: 'text/event-stream' });
  assert.equal(full.status, 503);
  assert.equal(full.headers.get('retry-after'), '5');
  assert.match(full.json.detail, /too many open streams/);
});
