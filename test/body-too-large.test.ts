import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { tempDataDir } from './helpers/data-dir.ts';
import { parseResponse, type RawResponse } from './helpers/raw-http.ts';
import { newKey, startServer } from './helpers/server.ts';

// A body over 1 MiB is 413, and the client gets to read that answer: the
// server answers, reads the rest of the body (bounded), then closes, so a
// client that sends its whole body before reading sees the 413 and no
// EPIPE or ECONNRESET.

const FIVE_MIB = 5 * 1024 * 1024;

interface Sent {
  /** An error writing the request or reading the answer (EPIPE, ECONNRESET), if any. */
  error: NodeJS.ErrnoException | undefined;
  response: RawResponse | undefined;
}

/** Writes `head` and `body` on one connection, reads until the server closes it. */
function sendAll(url: string, head: string, body: Buffer): Promise<Sent> {
  const { port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    let data = Buffer.alloc(0);
    let error: NodeJS.ErrnoException | undefined;
    const timer = setTimeout(() => socket.destroy(new Error('no close within 20 s')), 20_000);
    socket.on('data', (chunk: Buffer) => (data = Buffer.concat([data, chunk])));
    socket.on('error', (err) => (error ??= err));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ error, response: parseResponse(data, {}, true) });
    });
    socket.write(head);
    socket.end(body);
  });
}

for (const [name, framing] of [
  ['declared with Content-Length', (n: number) => `Content-Length: ${n}\r\n`],
  ['chunked', () => 'Transfer-Encoding: chunked\r\n'],
] as const) {
  test(`a 5 MiB body (${name}) on a connection the client closes: a complete 413 with its JSON body, no reset`, async (t) => {
    const dir = await tempDataDir(t);
    const key = await newKey(dir);
    const server = await startServer(t, dir);
    const payload = Buffer.alloc(FIVE_MIB, 'x');
    const body = name === 'chunked' ? Buffer.concat([Buffer.from(`${payload.length.toString(16)}\r\n`), payload, Buffer.from('\r\n0\r\n\r\n')]) : payload;
    const head = `POST /work/complete HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\n${framing(payload.length)}Connection: close\r\n\r\n`;
    const { error, response } = await sendAll(server.url, head, body);
    assert.equal(error, undefined, `the client saw ${error?.code ?? error?.message}`);
    assert.equal(response?.status, 413);
    assert.equal(response?.headers['content-type'], 'application/json');
    assert.equal(response?.headers.connection, 'close');
    assert.equal(response?.headers['x-content-type-options'], 'nosniff');
    assert.deepEqual(JSON.parse(response?.body.toString('utf8') ?? ''), { detail: 'request body is larger than 1048576 bytes' });
    assert.equal((await server.get('/healthz')).status, 200);
  });
}

test('fetch sending a 5 MiB body reads the 413 and its JSON body', async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  for (let i = 0; i < 3; i++) {
    const r = await fetch(`${server.url}/work/complete`, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
      body: Buffer.alloc(FIVE_MIB, ' '),
      signal: AbortSignal.timeout(20_000),
    });
    assert.equal(r.status, 413);
    assert.deepEqual(await r.json(), { detail: 'request body is larger than 1048576 bytes' });
  }
});
