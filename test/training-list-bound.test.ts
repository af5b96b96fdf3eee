import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { MAX_RUNS_ANSWER_BYTES, RUN_FIELDS_BYTES } from '../src/core/training-answer-bound.ts';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';

// GET /training/runs answers a bare JSON array of all the caller's runs,
// built in memory: the quotas bound it. Settings under which one user's
// runs could make an answer over 16 MiB (max_runs_per_user runs of
// max_params_bytes of params, and every other field at its longest) are
// refused; the defaults (1000 runs of 10 KiB) stay under it.

/** Params whose compact JSON is exactly `bytes` bytes long. */
function paramsOf(bytes: number): Record<string, string> {
  const params = { p: '' };
  params.p = 'x'.repeat(bytes - JSON.stringify(params).length);
  assert.equal(Buffer.byteLength(JSON.stringify(params)), bytes);
  return params;
}

/** A lone surrogate: the character JSON spends most bytes on (`\udc00`, 6 bytes); control characters are refused. */
const COSTLIEST = '\udc00';

test('quotas under which one user\'s listing could pass 16 MiB are refused, naming both settings', async (t) => {
  const dir = await tempDataDir(t);
  for (const training of [
    { max_runs_per_user: 1000, max_params_bytes: 262_144 },
    { max_params_bytes: 1024 * 1024 },
    { max_runs_per_user: 1_000_000, max_params_bytes: 2 },
    { max_runs_per_user: 1000, max_params_bytes: 10_634 },
    { max_runs_per_user: 2730, max_params_bytes: 2 },
  ]) {
    await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ training }));
    const r = await runEstate(['training', 'list', '--user', 'alice', '--data-dir', dir]);
    assert.equal(r.code, 2, `${JSON.stringify(training)}: ${r.stderr}`);
    assert.match(r.stderr, /training\.max_params_bytes: max_runs_per_user × \(max_params_bytes \+ 6144\) must be at most 16777216 bytes/);
    assert.equal(r.stderr.trim().split('\n').length, 1);
  }
  for (const training of [{}, { max_runs_per_user: 1000, max_params_bytes: 10_633 }, { max_runs_per_user: 31, max_params_bytes: 512 * 1024 }, { max_runs_per_user: 2729, max_params_bytes: 2 }]) {
    await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ training }));
    const r = await runEstate(['training', 'list', '--user', 'alice', '--json', '--data-dir', dir]);
    assert.equal(r.code, 0, `${JSON.stringify(training)}: ${r.stderr}`);
  }
});

test('the defaults: 1000 runs of at most 10 KiB of params each', async (t) => {
  const dir = await tempDataDir(t);
  const alice = await newKey(dir, 'alice');
  const server = await startServer(t, dir);
  assert.deepEqual(server.ctx.config.training, { max_runs_per_user: 1000, max_params_bytes: 10_240 });
  const post = (params: object) => server.request('POST', '/training/start', { headers: { 'X-API-Key': alice }, body: { params } });
  assert.equal((await post(paramsOf(10_240))).status, 201);
  assert.equal((await post(paramsOf(10_241))).status, 413);
});

test('a user who fills the quotas with the costliest runs gets a listing within 16 MiB', { timeout: 120_000 }, async (t) => {
  const dir = await tempDataDir(t);
  const maxParams = 512 * 1024;
  const maxRuns = Math.floor(MAX_RUNS_ANSWER_BYTES / (maxParams + RUN_FIELDS_BYTES));
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ training: { max_runs_per_user: maxRuns, max_params_bytes: maxParams } }));
  const alice = await newKey(dir, 'u'.repeat(64));
  const server = await startServer(t, dir);
  const body = { name: COSTLIEST.repeat(200), model: COSTLIEST.repeat(200), dataset: COSTLIEST.repeat(500), params: paramsOf(maxParams) };
  for (let i = 0; i < maxRuns; i++) {
    const r = await server.request('POST', '/training/start', { headers: { 'X-API-Key': alice }, body });
    assert.equal(r.status, 201, r.text.slice(0, 300));
  }
  const over = await server.request('POST', '/training/start', { headers: { 'X-API-Key': alice }, body });
  assert.equal(over.status, 422, 'the quota holds');

  const list = await server.get('/training/runs', { 'X-API-Key': alice });
  assert.equal(list.status, 200);
  const runs = list.json as { params: object; name: string }[];
  assert.equal(runs.length, maxRuns);
  assert.equal(runs[0]?.name, body.name, 'the costly characters are kept as sent');
  for (const run of runs) {
    const fields = Buffer.byteLength(JSON.stringify(run)) - Buffer.byteLength(JSON.stringify(run.params)) + 1;
    assert.ok(fields <= RUN_FIELDS_BYTES, `a run takes ${fields} bytes besides its params, over RUN_FIELDS_BYTES`);
  }
  const bytes = Buffer.byteLength(list.text);
  assert.ok(bytes <= MAX_RUNS_ANSWER_BYTES, `the listing is ${bytes} bytes`);
  assert.ok(bytes > MAX_RUNS_ANSWER_BYTES * 0.9, `the worst case is near the bound (${bytes} bytes): the test measures what it claims`);
});
