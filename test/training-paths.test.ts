import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import path from 'node:path';
import { test } from 'node:test';
import { createKey } from '../src/core/keys/key-store.ts';
import { deleteRun, getRun, listRuns } from '../src/core/training.ts';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { startServer } from './helpers/server.ts';

// run_id values that try to leave training/runs/. Every one must be refused
// (422) or not found (404), and no file anywhere may be read or removed.

const SYMLINKED = 'run_1111111111111111';

// The requests use ESTATE_API_KEY (user `operator`), so the server writes
// nothing to keys.json (no last_used_at) and every byte can be compared.
const OPERATOR_KEY = 'operator-secret-for-path-tests';

/** A run-shaped file owned by the operator, so that reading it by mistake would show. */
function decoy(runId: string): string {
  const at = '2026-11-01T00:00:00.000Z';
  return JSON.stringify({ run_id: runId, user_id: 'operator', status: 'queued', name: 'DECOY', model: null, dataset: null, params: {}, created_at: at, updated_at: at });
}

/** Every file under `dir` with its content: the whole data dir and its neighbours, before and after. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const file = path.join(dir, name);
    if (statSync(file).isFile()) out[name] = readFileSync(file, 'utf8');
  }
  return out;
}

/** A request with the path exactly as written (fetch would normalise `..`). */
function rawRequest(url: string, method: string, rawPath: string, key: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/`, { method, path: rawPath, headers: { 'X-API-Key': key } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function setup(t: Parameters<typeof tempDataDir>[0]) {
  const dir = await tempDataDir(t);
  const root = path.dirname(dir);
  const outside = path.join(root, 'outside');
  await mkdir(outside);
  const outsideRun = path.join(outside, 'run_2222222222222222');
  await writeFile(`${outsideRun}.json`, decoy('run_2222222222222222'));
  await writeFile(path.join(outside, `${SYMLINKED}.json`), decoy(SYMLINKED));
  await writeFile(path.join(dir, 'training', 'keys.json'), decoy('../keys'));
  await writeFile(path.join(dir, 'training', 'runs', 'keys.json'), decoy('keys'));
  await symlink(path.join(outside, `${SYMLINKED}.json`), path.join(dir, 'training', 'runs', `${SYMLINKED}.json`));
  await createKey(dir, { userId: 'operator' });
  return { dir, root, outsideRun, key: OPERATOR_KEY };
}

test('run_id values never read or delete a file outside training/runs/, over HTTP', async (t) => {
  const { dir, root, outsideRun, key } = await setup(t);
  const server = await startServer(t, dir, { envApiKey: OPERATOR_KEY });
  const before = snapshot(root);
  const segments = [
    '../keys',
    '..%2Fkeys',
    '..%2f..%2fkeys',
    '%2e%2e',
    '%2e%2e%2fkeys',
    '%2e%2e%2f%2e%2e%2fkeys',
    '%252e%252e%252fkeys',
    '..',
    '.',
    'keys',
    encodeURIComponent(outsideRun),
    encodeURIComponent('/etc/passwd'),
    `run_0123456789abcdef${encodeURIComponent('/../../keys')}`,
    `run_0123456789abcdef%00`,
    `${encodeURIComponent(`../../outside/${path.basename(outsideRun)}`)}`,
    'RUN_2222222222222222',
    SYMLINKED,
  ];
  for (const segment of segments) {
    await t.test(segment, async () => {
      for (const method of ['GET', 'DELETE']) {
        const r = await rawRequest(server.url, method, `/training/runs/${segment}`, key);
        assert.ok([404, 422].includes(r.status), `${method}: ${r.status} ${r.body}`);
        assert.ok(!r.body.includes('DECOY'), 'no decoy was read');
      }
    });
  }
  const list = await server.get('/training/runs', { 'X-API-Key': key });
  assert.deepEqual(list.json, [], 'neither the symlink nor a stray file is listed');
  assert.deepEqual(snapshot(root), before, 'no file was removed or changed');
});

test('core training functions check run_id before any file system call', async (t) => {
  const { dir, root, outsideRun } = await setup(t);
  const before = snapshot(root);
  const ids = ['../keys', '../../keys', '..', '', '/etc/passwd', outsideRun, `../../outside/${path.basename(outsideRun)}`, 'run_0123456789abcdef/../../keys', 'run_0123456789abcdef\0', SYMLINKED];
  for (const runId of ids) {
    await t.test(JSON.stringify(runId), async () => {
      assert.equal(await getRun(dir, 'operator', runId), undefined);
      assert.equal(await deleteRun(dir, 'operator', runId), false);
    });
  }
  assert.deepEqual(await listRuns(dir, 'operator'), []);
  assert.deepEqual(snapshot(root), before);
});

test('the CLI answers path-like run ids as not found (exit 3, as over HTTP) and deletes nothing', async (t) => {
  const { dir, root, outsideRun } = await setup(t);
  const before = snapshot(root);
  for (const runId of ['../../keys', '/etc/passwd', outsideRun]) {
    for (const command of ['show', 'delete']) {
      const r = await runEstate(['training', command, runId, '--user', 'operator', '--data-dir', dir]);
      assert.equal(r.code, 3, `${command} ${runId}: ${r.stderr}`);
      assert.match(r.stderr, /training run not found/);
    }
  }
  assert.deepEqual(snapshot(root), before);
});
