import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEMO_FIXTURE, tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';

// The spine's routes, each with its access. Every protected route is tried
// with no credential, a wrong one, and a good one in each carrier.
const PUBLIC = ['/', '/healthz', '/health'];
const PROTECTED = [
  '/trends',
  '/trends/latest',
  '/disk',
  '/disk/latest',
  '/health/pulse',
  '/health/pulse/status',
  '/builds',
  '/builds/recent',
  '/events',
  '/state',
  '/state/scoreboard',
  '/state/heartbeat',
  '/state/estate_map',
];

test('public routes answer 200 without a credential', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const server = await startServer(t, dir);
  for (const route of PUBLIC) {
    const r = await server.get(route);
    assert.equal(r.status, 200, route);
    assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
  }
});

test('protected routes: 403 without or with a wrong credential, 200 with each carrier', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const key = await newKey(dir);
  const server = await startServer(t, dir, { envApiKey: 'env-secret-for-operator' });
  const withQuery = (route: string, k: string) => `${route}${route.includes('?') ? '&' : '?'}api_key=${encodeURIComponent(k)}`;
  for (const route of PROTECTED) {
    await t.test(route, async () => {
      const denied: [string, Promise<{ status: number; json: any }>][] = [
        ['no credential', server.get(route)],
        ['wrong X-API-Key', server.get(route, { 'X-API-Key': 'est_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' })],
        ['wrong bearer', server.get(route, { Authorization: 'Bearer nope' })],
        ['empty bearer', server.get(route, { Authorization: 'Bearer ' })],
        ['basic auth', server.get(route, { Authorization: `Basic ${Buffer.from(`a:${key}`).toString('base64')}` })],
        ['wrong api_key', server.get(withQuery(route, 'nope'))],
        ['key with a flipped char', server.get(route, { 'X-API-Key': key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A') })],
      ];
      for (const [name, pending] of denied) {
        const r = await pending;
        assert.equal(r.status, 403, `${name}: ${r.status}`);
        assert.equal(typeof r.json.detail, 'string', name);
      }
      const allowed: [string, Promise<{ status: number }>][] = [
        ['X-API-Key', server.get(route, { 'X-API-Key': key })],
        ['Bearer', server.get(route, { Authorization: `Bearer ${key}` })],
        ['api_key', server.get(withQuery(route, key))],
        ['ESTATE_API_KEY', server.get(route, { 'X-API-Key': 'env-secret-for-operator' })],
      ];
      for (const [name, pending] of allowed) assert.equal((await pending).status, 200, `${route} with ${name}`);
    });
  }
});

test('the credential is checked before the input: a bad key and a bad limit is 403, not 422', async (t) => {
  const dir = await tempDataDir(t);
  const server = await startServer(t, dir);
  for (const route of ['/trends?limit=abc', '/state/passwd', '/builds?days=0']) {
    assert.equal((await server.get(route)).status, 403, route);
    assert.equal((await server.get(route, { 'X-API-Key': 'bad' })).status, 403, route);
  }
});

test('unknown path 404, wrong method 405 with Allow, HEAD like GET without a body', async (t) => {
  const dir = await tempDataDir(t);
  const server = await startServer(t, dir);
  const missing = await server.get('/nope');
  assert.equal(missing.status, 404);
  assert.deepEqual(missing.json, { detail: 'Not Found' });
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
    const r = await server.request(method, '/healthz');
    assert.equal(r.status, 405, method);
    assert.equal(r.headers.get('allow'), 'GET, HEAD');
    assert.equal(typeof r.json.detail, 'string');
  }
  const head = await server.request('HEAD', '/healthz');
  assert.equal(head.status, 200);
  assert.equal(head.text, '');
  assert.equal(head.headers.get('content-length'), String(JSON.stringify({ status: 'ok' }).length));
  assert.equal((await server.request('HEAD', '/trends')).status, 403);
});

test('every response carries the base security headers', async (t) => {
  const dir = await tempDataDir(t);
  const server = await startServer(t, dir);
  for (const route of ['/healthz', '/nope', '/trends']) {
    const r = await server.get(route);
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff', route);
    assert.equal(r.headers.get('referrer-policy'), 'no-referrer', route);
  }
});

test('JSON reads carry an ETag; If-None-Match with it is 304 with no body, until the data changes', async (t) => {
  const { appendFile, writeFile } = await import('node:fs/promises');
  const path = await import('node:path');
  const dir = await tempDataDir(t);
  const file = path.join(dir, 'trends.jsonl');
  await writeFile(file, '{"ts":"2026-11-21T00:00:00Z","v":1}\n');
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const first = await server.get('/trends', { 'X-API-Key': key });
  const etag = first.headers.get('etag');
  assert.match(etag ?? '', /^"[A-Za-z0-9_-]+"$/);
  assert.equal(first.headers.get('cache-control'), 'private, no-cache');
  const cases: [string, number][] = [
    [etag as string, 304],
    [`W/${etag}`, 304],
    [`"other", ${etag}`, 304],
    ['*', 304],
    ['"other"', 200],
  ];
  for (const [header, status] of cases) {
    const r = await server.get('/trends', { 'X-API-Key': key, 'If-None-Match': header });
    assert.equal(r.status, status, header);
    if (status === 304) assert.equal(r.text, '');
  }
  assert.equal((await server.get('/trends', { 'If-None-Match': etag as string })).status, 403, 'the credential is checked first');
  await appendFile(file, '{"ts":"2026-11-21T00:01:00Z","v":2}\n');
  const changed = await server.get('/trends', { 'X-API-Key': key, 'If-None-Match': etag as string });
  assert.equal(changed.status, 200);
  assert.notEqual(changed.headers.get('etag'), etag);
});
