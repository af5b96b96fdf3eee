import assert from 'node:assert/strict';
import { dashboardRoutes } from '../src/server/dashboard/dashboard-routes.ts';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { operations } from '../src/api/operations/index.ts';
import { docsRoutes, PAGE_ROUTE_DOCS } from '../src/server/docs-routes.ts';
import { pageRoutes } from '../src/server/html/page-routes.ts';
import { DEMO_FIXTURE, ROOT, tempDataDir } from './helpers/data-dir.ts';
import { startServer } from './helpers/server.ts';

// The README's list of public routes is what the server does without a
// credential: each route it names answers without one, and the training
// reads, which take an optional credential, say what they answer then
// (`GET /training/runs` 200 `[]`, a run 404), as the seed's rule has it.

async function streamStatus(url: string): Promise<number> {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { Accept: 'text/event-stream' }, signal: controller.signal });
  controller.abort();
  return response.status;
}

test('the README names the public routes, the training reads without a credential included, as the server answers them', async (t) => {
  const readme = (await readFile(path.join(ROOT, 'README.md'), 'utf8')).replace(/\s+/g, ' ');
  const paragraph = /Public routes need no credential: (.*?) Everything else/.exec(readme)?.[1];
  assert.ok(paragraph, 'the README has a paragraph of public routes');
  assert.match(paragraph, /without one, `GET \/training\/runs` answers 200 `\[\]` and every `GET \/training\/runs\/\{run_id\}` is 404/);

  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const server = await startServer(t, dir);
  const runs = await server.get('/training/runs');
  assert.deepEqual([runs.status, runs.json], [200, []]);
  assert.equal((await server.get('/training/runs/run_0123456789abcdef')).status, 404);
  assert.equal((await server.request('POST', '/training/start', { body: {} })).status, 403, 'starting a run needs a credential');

  // Every concrete route the paragraph names answers without a credential.
  const named = [...paragraph.matchAll(/`(\/[a-z0-9/._-]*)`/g)].map((m) => m[1] as string);
  for (const route of ['/', '/healthz', '/readyz', '/health', '/status', '/work/feed', '/hq/work', '/work/stream', '/api/openapi.json']) assert.ok(named.includes(route), `the README names ${route}`);
  for (const route of named.filter((r) => !r.startsWith('/training/'))) {
    // The stream never ends: its status line is enough.
    const r = route === '/work/stream' ? await streamStatus(`${server.url}${route}`) : (await server.get(route)).status;
    assert.notEqual(r, 403, `${route} is public in the README but answers 403`);
  }
});

/** A public route of the server: an operation with access 'public', or a route outside the table (pages, stream, docs). */
function serverRoutes(): { path: string; method: string; access: string }[] {
  const raw = [...docsRoutes(operations, PAGE_ROUTE_DOCS), ...pageRoutes(undefined as never), ...dashboardRoutes(undefined as never)];
  return [
    ...operations.map((op) => ({ path: op.path, method: op.method, access: op.access })),
    ...PAGE_ROUTE_DOCS.map((doc) => ({ path: doc.path, method: doc.method, access: doc.access })),
    // Served without the access check of the table: public by construction.
    ...raw.map((route) => ({ path: route.path, method: route.method, access: 'public' })),
  ];
}

/** Whether README route `named` (a path as the table writes it, or `/prefix/*`) covers `route`. */
function covers(named: string, route: string): boolean {
  return named.endsWith('/*') ? route.startsWith(named.slice(0, -1)) : named === route;
}

test('the README lists every public route, and only public ones', async () => {
  const readme = (await readFile(path.join(ROOT, 'README.md'), 'utf8')).replace(/\s+/g, ' ');
  const sentence = /Public routes need no credential: (.*?) The training reads take an optional credential/.exec(readme)?.[1];
  assert.ok(sentence, 'the README has a sentence of public routes');
  const named = [...sentence.matchAll(/`(\/[^`\s]*)`/g)].map((m) => m[1] as string);
  const routes = serverRoutes();

  const publicPaths = [...new Set(routes.filter((r) => r.access === 'public').map((r) => r.path))];
  assert.ok(publicPaths.includes('/work/stream') && publicPaths.includes('/api/openapi.json'), 'the table of routes is read whole');
  const missing = publicPaths.filter((p) => !named.some((n) => covers(n, p)));
  assert.deepEqual(missing, [], 'public routes the README does not list');

  for (const n of named) {
    const matched = routes.filter((r) => covers(n, r.path));
    assert.ok(matched.length > 0, `the README lists ${n}, which is no route`);
    const notPublic = matched.filter((r) => r.access !== 'public').map((r) => `${r.method} ${r.path} (${r.access})`);
    assert.deepEqual(notPublic, [], `the README lists ${n} as public`);
  }
});
