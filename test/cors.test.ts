import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';

const DASHBOARD = 'https://dash.example.org';

async function corsServer(t: Parameters<typeof tempDataDir>[0], origins: string[] | undefined) {
  const dir = await tempDataDir(t);
  if (origins) await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ serve: { cors_origins: origins } }));
  return { dir, key: await newKey(dir), server: await startServer(t, dir) };
}

const CORS_HEADERS = ['access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers', 'access-control-expose-headers', 'access-control-max-age'];

test('CORS is off by default: no CORS header for any origin, and a preflight is 405', async (t) => {
  const { key, server } = await corsServer(t, undefined);
  const cases: [string, string, Record<string, string>][] = [
    ['GET', '/healthz', { Origin: DASHBOARD }],
    ['GET', '/trends', { Origin: DASHBOARD, 'X-API-Key': key }],
    ['OPTIONS', '/trends', { Origin: DASHBOARD, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'x-api-key' }],
  ];
  for (const [method, route, headers] of cases) {
    const r = await server.request(method, route, { headers });
    assert.equal(r.status, method === 'OPTIONS' ? 405 : 200, `${method} ${route}`);
    for (const name of CORS_HEADERS) assert.equal(r.headers.get(name), null, `${method} ${route}: ${name}`);
    assert.doesNotMatch(r.headers.get('vary') ?? '', /origin/i, `${method} ${route}: nothing varies by origin`);
  }
});

test('with an allow-list: allowed origins get their own origin back, others nothing; every response varies by Origin', async (t) => {
  const { key, server } = await corsServer(t, [DASHBOARD, 'http://127.0.0.1:5173']);
  const cases: [string, Record<string, string>, string | null][] = [
    ['allowed origin', { Origin: DASHBOARD }, DASHBOARD],
    ['second allowed origin', { Origin: 'http://127.0.0.1:5173' }, 'http://127.0.0.1:5173'],
    ['another origin', { Origin: 'https://evil.example' }, null],
    ['an allowed origin with a path', { Origin: `${DASHBOARD}/` }, null],
    ['an allowed origin in another case', { Origin: DASHBOARD.toUpperCase() }, null],
    ['the literal null origin', { Origin: 'null' }, null],
    ['no origin', {}, null],
  ];
  for (const [name, headers, allowed] of cases) {
    await t.test(name, async () => {
      for (const [route, extra, status] of [['/healthz', {}, 200], ['/trends', { 'X-API-Key': key }, 200], ['/trends', {}, 403], ['/nope', {}, 404]] as const) {
        const r = await server.get(route, { ...headers, ...extra });
        assert.equal(r.status, status, route);
        assert.equal(r.headers.get('access-control-allow-origin'), allowed, route);
        assert.match(r.headers.get('vary') ?? '', /\bOrigin\b/, route);
        assert.equal(r.headers.get('access-control-allow-credentials'), null, 'credentials travel in headers, never cookies');
        if (allowed) assert.match(r.headers.get('access-control-expose-headers') ?? '', /X-Request-Id/);
      }
    });
  }
});

test('a preflight from an allowed origin is 204 with the methods and headers the dashboard needs; from another origin 405', async (t) => {
  const { server } = await corsServer(t, [DASHBOARD]);
  const preflight = { 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'x-api-key, content-type' };
  const ok = await server.request('OPTIONS', '/work/complete', { headers: { Origin: DASHBOARD, ...preflight } });
  assert.equal(ok.status, 204);
  assert.equal(ok.text, '');
  assert.equal(ok.headers.get('access-control-allow-origin'), DASHBOARD);
  const methods = (ok.headers.get('access-control-allow-methods') ?? '').split(/,\s*/);
  for (const m of ['GET', 'HEAD', 'POST', 'DELETE']) assert.ok(methods.includes(m), m);
  const allowedHeaders = (ok.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/,\s*/);
  for (const h of ['x-api-key', 'authorization', 'content-type', 'if-none-match']) assert.ok(allowedHeaders.includes(h), h);
  assert.match(ok.headers.get('access-control-max-age') ?? '', /^\d+$/);
  assert.equal(ok.headers.get('x-content-type-options'), 'nosniff', 'the security headers too');

  const other = await server.request('OPTIONS', '/work/complete', { headers: { Origin: 'https://evil.example', ...preflight } });
  assert.equal(other.status, 405);
  for (const name of CORS_HEADERS) assert.equal(other.headers.get(name), null, name);
  const notPreflight = await server.request('OPTIONS', '/work/complete', { headers: { Origin: DASHBOARD } });
  assert.equal(notPreflight.status, 405, 'OPTIONS without Access-Control-Request-Method is no preflight');
});

test('serve.cors_origins takes origins only: a wildcard, a path or a bare host is a config error naming the entry', async (t) => {
  for (const bad of ['*', 'https://dash.example.org/', 'https://dash.example.org/app', 'dash.example.org', 'ftp://dash.example.org']) {
    await t.test(bad, async () => {
      const dir = await tempDataDir(t);
      await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ serve: { cors_origins: [DASHBOARD, bad] } }));
      const r = await runEstate(['health', '--data-dir', dir]);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /serve\.cors_origins\.1: must be an origin/);
    });
  }
});
