import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';

// Each user may own at most training.max_runs_per_user runs (422 past it) and
// each run's params may hold at most training.max_params_bytes bytes as
// compact JSON (413 past it). Both are settings of estate.config.json.

const MAX_PARAMS = 100;

async function quotaDir(t: Parameters<typeof tempDataDir>[0]): Promise<string> {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ training: { max_runs_per_user: 3, max_params_bytes: MAX_PARAMS } }));
  return dir;
}

/** Params whose compact JSON is exactly `bytes` bytes long. */
function paramsOf(bytes: number): Record<string, string> {
  const params = { p: '' };
  params.p = 'x'.repeat(bytes - JSON.stringify(params).length);
  assert.equal(JSON.stringify(params).length, bytes);
  return params;
}

test('over HTTP: the fourth run of a user is 422 quota_exceeded, other users are not affected, a delete makes room', async (t) => {
  const dir = await quotaDir(t);
  const [alice, bob] = [await newKey(dir, 'alice'), await newKey(dir, 'bob')];
  const server = await startServer(t, dir);
  const post = (key: string, body: object) => server.request('POST', '/training/start', { headers: { 'X-API-Key': key }, body });
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await post(alice, { name: `run ${i}` });
    assert.equal(r.status, 201, r.text);
    ids.push(r.json.run_id);
  }
  const over = await post(alice, { name: 'one too many' });
  assert.equal(over.status, 422, over.text);
  assert.equal(over.json.detail.length, 1);
  assert.deepEqual(over.json.detail[0].loc, ['body']);
  assert.equal(over.json.detail[0].type, 'quota_exceeded');
  assert.match(over.json.detail[0].msg, /3 training runs, the most allowed \(training\.max_runs_per_user\); delete one first/);
  assert.equal((await server.get('/training/runs', { 'X-API-Key': alice })).json.length, 3, 'nothing was stored');
  assert.equal(readdirSync(path.join(dir, 'training', 'runs')).length, 3);

  assert.equal((await post(bob, { name: 'bob' })).status, 201, "bob's quota is his own");
  assert.equal((await server.request('DELETE', `/training/runs/${ids[0]}`, { headers: { 'X-API-Key': alice } })).status, 204);
  assert.equal((await post(alice, { name: 'after a delete' })).status, 201);
  assert.equal((await post(alice, { name: 'full again' })).status, 422);
});

test('over HTTP: params over max_params_bytes are 413 with a clear detail; at the limit they are stored', async (t) => {
  const dir = await quotaDir(t);
  const alice = await newKey(dir, 'alice');
  const server = await startServer(t, dir);
  const post = (body: object) => server.request('POST', '/training/start', { headers: { 'X-API-Key': alice }, body });
  const big = await post({ params: paramsOf(MAX_PARAMS + 1) });
  assert.equal(big.status, 413, big.text);
  assert.deepEqual(big.json, { detail: `params is ${MAX_PARAMS + 1} bytes as JSON; a run's params may hold at most ${MAX_PARAMS} (training.max_params_bytes)` });
  const multiByte = await post({ params: { p: 'é'.repeat(50) } });
  assert.equal(multiByte.status, 413, 'bytes are counted in UTF-8, not characters');
  assert.deepEqual(readdirSync(path.join(dir, 'training', 'runs')), [], 'nothing was stored');
  const exact = await post({ params: paramsOf(MAX_PARAMS) });
  assert.equal(exact.status, 201, exact.text);
  assert.deepEqual(exact.json.params, paramsOf(MAX_PARAMS));
});

test('the CLI refuses the same, with exit 2 and one line on stderr', async (t) => {
  const dir = await quotaDir(t);
  const start = (...extra: string[]) => runEstate(['training', 'start', '--user', 'alice', '--data-dir', dir, ...extra]);
  const big = await start('--params', JSON.stringify(paramsOf(MAX_PARAMS + 1)));
  assert.equal(big.code, 2, big.stderr);
  assert.match(big.stderr, /params is 101 bytes as JSON; a run's params may hold at most 100 \(training\.max_params_bytes\)/);
  assert.equal(big.stderr.trim().split('\n').length, 1);
  for (let i = 0; i < 3; i++) assert.equal((await start('--name', `r${i}`)).code, 0);
  const over = await start('--name', 'one too many');
  assert.equal(over.code, 2, over.stderr);
  assert.match(over.stderr, /quota exceeded: user alice has 3 training runs/);
  assert.equal(over.stderr.trim().split('\n').length, 1);
});

test('the quotas are settings: defaults 1000 runs and 10 KiB, invalid values refused with their path', async (t) => {
  const dir = await tempDataDir(t);
  const alice = await newKey(dir, 'alice');
  const server = await startServer(t, dir);
  assert.deepEqual(server.ctx.config.training, { max_runs_per_user: 1000, max_params_bytes: 10_240 });
  const under = await server.request('POST', '/training/start', { headers: { 'X-API-Key': alice }, body: { params: paramsOf(10_240) } });
  assert.equal(under.status, 201, '10 KiB of params is allowed by default');
  const over = await server.request('POST', '/training/start', { headers: { 'X-API-Key': alice }, body: { params: paramsOf(10_241) } });
  assert.equal(over.status, 413);

  for (const [training, problem] of [
    [{ max_runs_per_user: 0 }, /training\.max_runs_per_user/],
    [{ max_params_bytes: 'big' }, /training\.max_params_bytes/],
    [{ max_run: 3 }, /training\.max_run: unknown key/],
  ] as const) {
    await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ training }));
    const r = await runEstate(['training', 'list', '--user', 'alice', '--data-dir', dir]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, problem);
  }
});

test('the OpenAPI document lists both quota answers for POST /training/start', async (t) => {
  const dir = await tempDataDir(t);
  const server = await startServer(t, dir);
  const op = (await server.get('/api/openapi.json')).json.paths['/training/start'].post;
  assert.ok(op.responses['413'] && op.responses['422'], Object.keys(op.responses).join(','));
  assert.match(op.description, /max_params_bytes.*413/s);
  assert.match(op.description, /max_runs_per_user.*422.*quota_exceeded/s);
});
