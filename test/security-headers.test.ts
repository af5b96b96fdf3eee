import assert from 'node:assert/strict';
import { test } from 'node:test';
import { operations } from '../src/api/operations/index.ts';
import { docsRoutes, PAGE_ROUTE_DOCS } from '../src/server/docs-routes.ts';
import { DEMO_FIXTURE, tempDataDir } from './helpers/data-dir.ts';
import { buildRequest, rawRequest } from './helpers/raw-http.ts';
import { newKey, startServer } from './helpers/server.ts';

// Every response carries the security headers and a request id, whatever
// produced it: an operation, a raw route (docs, assets, pages, the event
// stream), an error of the pipeline (403, 404, 405, 413, 422), a 304, a HEAD,
// or the raw answer to a request Node's parser refused (400, 431). HTML gets
// a strict CSP of its own; nothing gets CORS headers unless configured.

/** A value for each path parameter of the table and of the raw routes. */
const SAMPLE: Record<string, string> = {
  file_name: 'scoreboard',
  run_id: 'run_0000000000000000',
  entry_id: 'pub_0000000000000000',
  site: 'garden',
  content_type: 'note',
  owner: 'org',
  repo: 'repo',
  file: 'swagger-init.js',
};

interface Seen {
  what: string;
  status: number;
  headers: Headers | Record<string, string>;
}

function header(headers: Seen['headers'], name: string): string | null {
  return headers instanceof Headers ? headers.get(name) : (headers[name] ?? null);
}

function checkHeaders({ what, status, headers }: Seen): void {
  const where = `${what} → ${status}`;
  assert.equal(header(headers, 'x-content-type-options'), 'nosniff', where);
  assert.equal(header(headers, 'referrer-policy'), 'no-referrer', where);
  assert.match(header(headers, 'x-request-id') ?? '', /^[A-Za-z0-9._-]{1,128}$/, where);
  const csp = header(headers, 'content-security-policy') ?? '';
  assert.match(csp, /default-src 'none'/, `${where}: CSP ${csp}`);
  assert.match(csp, /frame-ancestors 'none'/, `${where}: CSP ${csp}`);
  const scripts = /script-src ([^;]*)/.exec(csp)?.[1] ?? '';
  assert.doesNotMatch(scripts, /unsafe-inline|unsafe-eval|\*/, `${where}: scripts are ours only`);
  assert.equal(header(headers, 'access-control-allow-origin'), null, `${where}: no CORS unless configured`);
}

test('every route, every error path and every raw answer carries the security headers and an X-Request-Id', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const seen: Seen[] = [];
  // Reads only the status and headers: the event stream never ends by itself.
  const call = async (what: string, method: string, path: string, headers: Record<string, string> = {}, body?: string) => {
    const controller = new AbortController();
    const res = await fetch(server.url + path, { method, headers: { Origin: 'https://elsewhere.example', ...headers }, body, signal: controller.signal });
    seen.push({ what: `${what}: ${method} ${path}`, status: res.status, headers: res.headers });
    controller.abort();
    return res;
  };

  const routes = [
    ...operations.map((op) => ({ method: op.method as string, path: op.path })),
    ...PAGE_ROUTE_DOCS.map((r) => ({ method: r.method as string, path: r.path })),
    ...docsRoutes(operations).map((r) => ({ method: r.method as string, path: r.path })),
  ];
  for (const route of routes) {
    const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(SAMPLE[name] ?? 'x'));
    const body = route.method === 'POST' ? '{}' : undefined;
    const json: Record<string, string> = body === undefined ? {} : { 'Content-Type': 'application/json' };
    await call('with a key', route.method, path, { 'X-API-Key': key, ...json }, body);
    await call('without a key', route.method, path, json, body);
    if (route.method === 'GET') await call('HEAD', 'HEAD', path, { 'X-API-Key': key });
  }
  const etag = (await call('for an ETag', 'GET', '/healthz')).headers.get('etag') ?? '';
  const docsTag = (await call('for an ETag', 'GET', '/api/openapi.json')).headers.get('etag') ?? '';
  const special: [string, string, string, Record<string, string>, string | undefined, number][] = [
    ['unknown path', 'GET', '/nope', {}, undefined, 404],
    ['wrong method', 'PUT', '/healthz', {}, undefined, 405],
    ['OPTIONS without CORS', 'OPTIONS', '/trends', { 'Access-Control-Request-Method': 'GET' }, undefined, 405],
    ['body over 1 MiB', 'POST', '/work/complete', { 'X-API-Key': key, 'Content-Type': 'application/json' }, `"${'x'.repeat(1024 * 1024 + 10)}"`, 413],
    ['bad JSON', 'POST', '/work/complete', { 'X-API-Key': key, 'Content-Type': 'application/json' }, '{', 422],
    ['invalid query', 'GET', '/trends?limit=0', { 'X-API-Key': key }, undefined, 422],
    ['304 of a JSON read', 'GET', '/healthz', { 'If-None-Match': etag }, undefined, 304],
    ['304 of the OpenAPI document', 'GET', '/api/openapi.json', { 'If-None-Match': docsTag }, undefined, 304],
  ];
  for (const [what, method, path, headers, body, status] of special) {
    assert.equal((await call(what, method, path, headers, body)).status, status, what);
  }
  const raw: [string, Buffer, number][] = [
    ['malformed request line', Buffer.from('NOT HTTP AT ALL\r\n\r\n'), 400],
    ['header too large', buildRequest('GET', '/healthz', [['X-Big', 'x'.repeat(64 * 1024)]]), 431],
    ['bad header name', buildRequest('GET', '/healthz', [['Bad Header', 'x']]), 400],
    ['an unknown expectation (Node alone would answer 417, bare)', buildRequest('GET', '/healthz', [['Expect', 'x-unknown']]), 200],
  ];
  for (const [what, bytes, status] of raw) {
    const r = await rawRequest(server.url, bytes);
    assert.ok(r, `${what}: an answer`);
    assert.equal(r.status, status, what);
    if (status !== 200) assert.deepEqual(JSON.parse(r.body.toString('utf8')), { detail: r.status === 431 ? 'Request Header Fields Too Large' : 'Bad Request' }, what);
    seen.push({ what, status: r.status, headers: r.headers });
  }

  assert.ok(seen.length > 3 * operations.length, `walked ${seen.length} responses`);
  for (const s of seen) checkHeaders(s);
  const statuses = new Set(seen.map((s) => s.status));
  for (const status of [200, 201, 304, 400, 403, 404, 405, 413, 422, 431]) assert.ok(statuses.has(status), `some response was ${status}`);
});

test('HTML pages send their own strict CSP: nonce or self scripts only, nothing from elsewhere', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const server = await startServer(t, dir);
  for (const path of ['/status', '/hq/work', '/api/docs', '/api/redoc']) {
    const r = await server.get(path);
    assert.equal(r.status, 200, path);
    assert.match(r.headers.get('content-type') ?? '', /^text\/html/, path);
    const csp = r.headers.get('content-security-policy') ?? '';
    const directives = new Map(csp.split(';').map((d) => {
      const [name = '', ...values] = d.trim().split(/\s+/);
      return [name, values] as const;
    }));
    assert.deepEqual(directives.get('default-src'), ["'none'"], path);
    assert.deepEqual(directives.get('frame-ancestors'), ["'none'"], path);
    assert.deepEqual(directives.get('base-uri'), ["'none'"], path);
    for (const [name, values] of directives) {
      for (const v of values) assert.doesNotMatch(v, /^(\*|https?:|'unsafe-eval')/, `${path}: ${name} ${v}`);
    }
    assert.doesNotMatch((directives.get('script-src') ?? []).join(' '), /unsafe-inline/, path);
  }
});
