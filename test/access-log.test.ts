import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loggedPath } from '../src/server/access-log.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { buildRequest, rawRequest } from './helpers/raw-http.ts';
import { newKey, startServer } from './helpers/server.ts';
import { waitUntil } from './helpers/wait-until.ts';

// One JSON line per request: {time, level, event, id, method, path, status,
// duration_ms, user, client}; the id is the response's X-Request-Id; no
// line carries a credential.

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function logged(t: Parameters<typeof tempDataDir>[0]) {
  const dir = await tempDataDir(t);
  const lines: Record<string, any>[] = [];
  const server = await startServer(t, dir, { log: (line) => lines.push(line) });
  const requests = () => lines.filter((l) => l.event === 'request');
  /** The access line of the latest request with this id (requests with the same id are sent one after another). */
  let seen = 0;
  const lineOf = async (id: string | null) => {
    await waitUntil(`an access line for ${id}`, () => requests().slice(seen).some((l) => l.id === id));
    const line = requests().slice(seen).find((l) => l.id === id) as Record<string, any>;
    seen = requests().indexOf(line) + 1;
    return line;
  };
  return { dir, lines, server, requests, lineOf };
}

test('every request gets one access line whose id is its X-Request-Id, with the user when a credential was valid', async (t) => {
  const { dir, server, requests, lineOf } = await logged(t);
  const key = await newKey(dir, 'alice');
  const cases: [string, string, Record<string, string>, number, string | null][] = [
    ['GET', '/healthz', {}, 200, null],
    ['GET', '/trends?limit=5', { 'X-API-Key': key }, 200, 'alice'],
    ['GET', '/trends', {}, 403, null],
    ['GET', '/trends?limit=0', { Authorization: `Bearer ${key}` }, 422, 'alice'],
    ['GET', '/nope', {}, 404, null],
    ['DELETE', '/healthz', {}, 405, null],
    ['HEAD', '/healthz', {}, 200, null],
  ];
  for (const [method, route, headers, status, user] of cases) {
    const r = await server.request(method, route, { headers });
    assert.equal(r.status, status, route);
    const id = r.headers.get('x-request-id');
    assert.match(id ?? '', /^[0-9a-f-]{36}$/, 'a generated id is a UUID');
    const line = await lineOf(id);
    assert.deepEqual(Object.keys(line).sort(), ['client', 'duration_ms', 'event', 'id', 'level', 'method', 'path', 'status', 'time', 'user']);
    assert.deepEqual([line.level, line.method, line.path, line.status, line.user, line.client], ['info', method, route, status, user, '127.0.0.1'], route);
    assert.match(line.time, ISO);
    assert.ok(typeof line.duration_ms === 'number' && line.duration_ms >= 0);
  }
  assert.equal(requests().length, cases.length, 'one line per request');
});

test('a sane incoming X-Request-Id is kept and echoed, errors included; anything else is replaced', async (t) => {
  const { dir, server, lineOf } = await logged(t);
  const key = await newKey(dir);
  const cases: [string, boolean][] = [
    ['req-123_abc.DEF', true],
    ['a'.repeat(128), true],
    ['a'.repeat(129), false],
    ['has space', false],
    ['semi;colon', false],
    ['<script>', false],
    ['', false],
    ['est_0123456789ab_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', false],
    ['eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln', false],
  ];
  for (const [sent, kept] of cases) {
    for (const [route, headers] of [['/trends', { 'X-API-Key': key }], ['/trends?limit=0', { 'X-API-Key': key }], ['/trends', {}]] as const) {
      const r = await server.get(route, { ...headers, 'X-Request-Id': sent });
      const id = r.headers.get('x-request-id');
      if (kept) assert.equal(id, sent, `${sent} on ${route} (${r.status})`);
      else assert.match(id ?? '', /^[0-9a-f-]{36}$/, `${sent} is replaced`);
      assert.equal((await lineOf(id)).status, r.status);
    }
  }
});

test('credentials never reach the log: api_key is redacted in every spelling, headers are never logged', async (t) => {
  const { dir, lines, server, lineOf } = await logged(t);
  const key = await newKey(dir);
  const secret = 'hunter2-super-secret';
  const cases: [string, Record<string, string>, string][] = [
    [`/trends?api_key=${secret}&limit=2`, {}, '/trends?api_key=REDACTED&limit=2'],
    [`/trends?limit=2&api%5Fkey=${secret}`, {}, '/trends?limit=2&api%5Fkey=REDACTED'],
    [`/trends?api_key=${secret}&api_key=${key}`, {}, '/trends?api_key=REDACTED&api_key=REDACTED'],
    [`/trends?api_key`, {}, '/trends?api_key=REDACTED'],
    [`/healthz?x=${secret}`, {}, `/healthz?x=${secret}`],
    [`/healthz?x=${key}`, {}, `/healthz?x=${key.slice(0, 16)}_REDACTED`],
    [`/trends/${key}`, {}, `/trends/${key.slice(0, 16)}_REDACTED`],
    ['/healthz?t=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln', {}, '/healthz?t=REDACTED'],
    ['/trends', { 'X-API-Key': secret }, '/trends'],
    ['/trends', { Authorization: `Bearer ${secret}` }, '/trends'],
    ['/trends', { 'X-API-Key': key }, '/trends'],
  ];
  for (const [route, headers, path] of cases) {
    const r = await server.get(route, headers);
    assert.equal((await lineOf(r.headers.get('x-request-id'))).path, path);
  }
  const text = lines.map((l) => JSON.stringify(l)).join('\n');
  assert.ok(!text.includes(key), 'a valid key is never logged');
  assert.equal(text.split(secret).length - 1, 1, 'the secret appears only where it was no credential (?x=)');
});

test('loggedPath cuts a huge target and keeps the redaction', () => {
  const long = `/trends?api_key=s3cret&q=${'x'.repeat(5000)}`;
  const path = loggedPath(long);
  assert.equal(path.length, 2048);
  assert.ok(path.startsWith('/trends?api_key=REDACTED&q=xxx'));
});

test('a connection that closes before the answer is logged as aborted; a request the parser refused as a client_error', async (t) => {
  const { server, lines, lineOf } = await logged(t);
  const controller = new AbortController();
  const stream = await fetch(`${server.url}/work/stream`, { signal: controller.signal, headers: { 'X-Request-Id': 'the-stream' } });
  assert.equal(stream.status, 200);
  controller.abort();
  const line = await lineOf('the-stream');
  assert.deepEqual([line.status, line.aborted], [200, true]);

  const raw = await rawRequest(server.url, buildRequest('GET', '/healthz', [['Bad Header', 'x']]));
  assert.equal(raw?.status, 400);
  await waitUntil('a client_error line', () => lines.some((l) => l.event === 'client_error'));
  const refused = lines.find((l) => l.event === 'client_error') as Record<string, unknown>;
  assert.deepEqual([refused.id, refused.status, refused.level], [raw?.headers['x-request-id'], 400, 'warn']);
  assert.match(String(refused.code), /^HPE_/);
});
