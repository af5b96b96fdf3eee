import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, readResponse, startServer, type TestResponse, type TestServer } from './helpers/server.ts';

// The seed: a training run that is not the caller's is 404, "otherwise 404",
// whatever the id looks like. And the OpenAPI document's `security` says of
// every route what the server does with a call that carries no credential.

const MISSING = 'run_0000000000000000';
// (`..` itself is left out: fetch resolves it before sending; training-paths.test.ts sends it raw.)
const MALFORMED = ['no-such-run-1', 'RUN_0123456789ABCDEF', 'run_0123', 'run_0123456789abcdefg', 'run_..', encodeURIComponent('../../keys'), encodeURIComponent('run_0123456789abcdef/../x'), 'x'.repeat(300)];

test('GET and DELETE /training/runs/{run_id}: a malformed id is the same 404, with the same body, as a missing or foreign run', async (t) => {
  const dir = await tempDataDir(t);
  const [alice, bob] = [await newKey(dir, 'alice'), await newKey(dir, 'bob')];
  const server = await startServer(t, dir);
  const bobRun = (await server.request('POST', '/training/start', { headers: { 'X-API-Key': bob }, body: {} })).json.run_id as string;
  for (const method of ['GET', 'DELETE']) {
    const call = (id: string) => server.request(method, `/training/runs/${id}`, { headers: { 'X-API-Key': alice } });
    const missing = await call(MISSING);
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.json, { detail: 'training run not found' });
    const foreign = await call(bobRun);
    assert.deepEqual([foreign.status, foreign.text], [404, missing.text], `${method} of another user's run`);
    for (const id of MALFORMED) {
      const r = await call(id);
      assert.deepEqual([r.status, r.text], [404, missing.text], `${method} ${id}`);
      assert.equal(r.headers.get('content-type'), missing.headers.get('content-type'));
    }
  }
  const anonymous = await server.get('/training/runs/no-such-run-1');
  assert.deepEqual([anonymous.status, anonymous.json], [404, { detail: 'training run not found' }], 'without a credential too');
  assert.equal((await server.get(`/training/runs/${bobRun}`, { 'X-API-Key': bob })).status, 200, "bob's run is untouched");
});

test('the CLI answers a malformed run id as not found (exit 3), locally and with --url', async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir, 'alice');
  const server = await startServer(t, dir);
  for (const command of ['show', 'delete']) {
    for (const where of [['--data-dir', dir, '--user', 'alice'], ['--url', server.url]]) {
      const r = await runEstate(['training', command, 'no-such-run-1', ...where], { env: { ESTATE_API_KEY: key } });
      assert.equal(r.code, 3, `${command} ${where[0]}: ${r.stderr}`);
      assert.match(r.stderr, /training run not found/);
    }
  }
});

type Json = Record<string, any>;

/** A call without any credential; an event stream is read up to its headers. */
async function anonymous(server: TestServer, method: string, route: string, produces: string | undefined): Promise<TestResponse> {
  if (method === 'GET' && produces === 'text/event-stream') {
    const abort = new AbortController();
    const res = await fetch(server.url + route, { signal: abort.signal });
    if (res.headers.get('content-type')?.startsWith('text/event-stream')) {
      abort.abort();
      return { status: res.status, headers: res.headers, text: '', json: undefined };
    }
    return readResponse(res);
  }
  return server.request(method, route, method === 'GET' ? {} : { body: {} });
}

test("every route's declared security matches what the server does without a credential", async (t) => {
  const dir = await tempDataDir(t);
  const server = await startServer(t, dir);
  const doc = (await server.get('/api/openapi.json')).json as Json;
  const training: Record<string, boolean> = {};
  let checked = 0;
  for (const [route, methods] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(methods)) {
      const security = op.security as Json[];
      // Anonymous calls are allowed when security is empty or lists the empty requirement `{}`.
      const needs = security.length > 0 && !security.some((s) => Object.keys(s).length === 0);
      const url = route.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'run_id' ? MISSING : 'sample'));
      const produces = Object.keys((op.responses?.['200']?.content ?? {}) as Json)[0];
      const r = await anonymous(server, method.toUpperCase(), url, produces);
      if (needs) assert.equal(r.status, 403, `${method.toUpperCase()} ${route} declares a credential needed: ${r.status} ${r.text.slice(0, 200)}`);
      else assert.notEqual(r.status, 403, `${method.toUpperCase()} ${route} declares anonymous calls allowed: ${r.text.slice(0, 200)}`);
      if (route.startsWith('/training')) training[`${method.toUpperCase()} ${route}`] = needs;
      checked++;
    }
  }
  assert.ok(checked > 20, `only ${checked} operations`);
  assert.deepEqual(training, {
    'POST /training/start': true,
    'GET /training/runs': false,
    'GET /training/runs/{run_id}': false,
    'DELETE /training/runs/{run_id}': true,
  });
  assert.equal((await server.get('/training/runs')).text, '[]', 'GET /training/runs without a credential is a bare []');
});
