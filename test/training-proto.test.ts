import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';

// A JSON key `__proto__` is input like any other: where a schema would drop
// it (the keys of training `params`), the request is 422 at its loc and
// nothing is stored; inside a free-form value it is stored as data and read
// back as sent. Never dropped silently, never a prototype.

async function runFiles(dir: string): Promise<string[]> {
  return (await readdir(path.join(dir, 'training', 'runs'), { recursive: true })).filter((f) => f.endsWith('.json'));
}

test('__proto__ among training params is 422 at its loc, nothing stored; nested deeper it round-trips as data', async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir, 'alice');
  const server = await startServer(t, dir);
  const headers = { 'X-API-Key': key };

  // The last two spell the key with escapes: the server skips its walk for __proto__ only for a text with neither the word nor an escape.
  for (const body of ['{"params": {"__proto__": {"admin": true}, "lr": 0.1}}', '{"params": {"__proto__": 1}}', '{"params": {"\\u005f_proto__": 1}}', '{"params": {"__\\u0070roto__": 1}}']) {
    const r = await server.request('POST', '/training/start', { headers, body });
    assert.equal(r.status, 422, r.text);
    assert.deepEqual(r.json.detail, [{ loc: ['body', 'params', '__proto__'], msg: "Value error, a key named '__proto__' cannot be stored", type: 'value_error' }]);
  }
  assert.deepEqual(await runFiles(dir), [], 'nothing stored');

  // At the top of the body it is an unknown field, as before.
  const top = await server.request('POST', '/training/start', { headers, body: '{"__proto__": {"x": 1}}' });
  assert.equal(top.status, 422);
  assert.deepEqual(top.json.detail.map((d: { loc: unknown; type: string }) => [d.loc, d.type]), [[['body', '__proto__'], 'extra_forbidden']]);

  // Inside a parameter's value, it is data: stored and read back as sent.
  const sent = '{"params": {"opt": {"__proto__": {"admin": true}, "b": [{"__proto__": 2}]}}}';
  const created = await server.request('POST', '/training/start', { headers, body: sent });
  assert.equal(created.status, 201, created.text);
  const expected = JSON.parse(sent).params;
  const got = await server.get(`/training/runs/${created.json.run_id}`, headers);
  assert.equal(got.status, 200);
  for (const run of [created.json, got.json]) {
    assert.equal(JSON.stringify(run.params), JSON.stringify(expected));
    assert.ok(Object.hasOwn(run.params.opt, '__proto__'));
  }
  assert.equal(({} as Record<string, unknown>).admin, undefined, 'no prototype was touched');
});

test('the CLI answers the same: training start --params with a __proto__ key exits 2 naming it', async (t) => {
  const dir = await tempDataDir(t);
  const r = await runEstate(['training', 'start', '--user', 'alice', '--params', '{"__proto__": {"a": 1}}', '--data-dir', dir]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /^estate: [^\n]*__proto__[^\n]*\n$/);
  assert.deepEqual(await runFiles(dir), []);
});
