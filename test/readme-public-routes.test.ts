import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { DEMO_FIXTURE, ROOT, tempDataDir } from './helpers/data-dir.ts';
import { startServer } from './helpers/server.ts';

// The README's list of public routes is what the server does without a
// credential: each route it names answers without one, and the training
// reads, which take an optional credential, say what they answer then
// (`GET /training/runs` 200 `[]`, a run 404), as the seed's rule has it.

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
  const named = [...paragraph.matchAll(/`(\/[a-z/-]*)`/g)].map((m) => m[1] as string);
  for (const route of ['/', '/healthz', '/readyz', '/health', '/status', '/work/feed', '/hq/work']) assert.ok(named.includes(route), `the README names ${route}`);
  for (const route of named.filter((r) => !r.startsWith('/training/'))) {
    const r = await server.get(route);
    assert.notEqual(r.status, 403, `${route} is public in the README but answers 403`);
  }
});
