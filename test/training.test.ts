import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { createKey } from '../src/core/keys/key-store.ts';
import { createToken } from '../src/core/keys/tokens.ts';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { startServer, type TestServer } from './helpers/server.ts';

const MISSING = 'run_0000000000000000';

/** The four ways to carry a credential: X-API-Key, Bearer with a key, Bearer with a token, ?api_key=. */
interface Carrier {
  name: string;
  call: (server: TestServer, method: string, route: string, body?: object) => ReturnType<TestServer['request']>;
}

async function carriersFor(dir: string, user: string): Promise<Carrier[]> {
  const { key } = await createKey(dir, { userId: user });
  const { token } = await createToken(dir, { userId: user, ttlMs: 3_600_000 });
  const withQuery = (route: string) => `${route}${route.includes('?') ? '&' : '?'}api_key=${encodeURIComponent(key)}`;
  return [
    { name: 'X-API-Key', call: (s, m, r, body) => s.request(m, r, { headers: { 'X-API-Key': key }, body }) },
    { name: 'Bearer key', call: (s, m, r, body) => s.request(m, r, { headers: { Authorization: `Bearer ${key}` }, body }) },
    { name: 'Bearer token', call: (s, m, r, body) => s.request(m, r, { headers: { Authorization: `Bearer ${token}` }, body }) },
    { name: '?api_key=', call: (s, m, r, body) => s.request(m, withQuery(r), { body }) },
  ];
}

test('POST /training/start creates a run of the credential user, stored atomically in training/runs', async (t) => {
  const dir = await tempDataDir(t);
  const { key } = await createKey(dir, { userId: 'alice' });
  const server = await startServer(t, dir);
  const body = { name: 'nightly', model: 'small-7b', dataset: 'notes-2026', params: { epochs: 3, lr: 0.001, tags: ['a'] } };
  const r = await server.request('POST', '/training/start', { headers: { 'X-API-Key': key }, body });
  assert.equal(r.status, 201);
  assert.match(r.json.run_id, /^run_[0-9a-f]{16}$/);
  assert.deepEqual(
    { ...r.json, run_id: 'X', created_at: 'T', updated_at: 'T' },
    { run_id: 'X', user_id: 'alice', status: 'queued', ...body, created_at: 'T', updated_at: 'T' },
  );
  assert.ok(!Number.isNaN(Date.parse(r.json.created_at)));
  const file = path.join(dir, 'training', 'runs', `${r.json.run_id}.json`);
  assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), r.json);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.deepEqual(readdirSync(path.dirname(file)), [path.basename(file)], 'no temp file is left behind');

  const empty = await server.request('POST', '/training/start', { headers: { 'X-API-Key': key }, body: {} });
  assert.equal(empty.status, 201, '{} is a valid body');
  assert.deepEqual([empty.json.name, empty.json.model, empty.json.dataset, empty.json.params], [null, null, null, {}]);
});

test('POST /training/start: 403 without a user, 422 on a bad body', async (t) => {
  const dir = await tempDataDir(t);
  const { key } = await createKey(dir, { userId: 'alice' });
  const server = await startServer(t, dir);
  assert.equal((await server.request('POST', '/training/start', { body: {} })).status, 403, 'no credential');
  assert.equal((await server.request('POST', '/training/start', { body: { name: 5 } })).status, 403, 'no credential: 403 before the body is read');
  assert.equal((await server.request('POST', '/training/start', { headers: { 'X-API-Key': 'est_bad' }, body: {} })).status, 403, 'invalid credential');
  const cases: [string, unknown, string, (string | number)[]][] = [
    ['unknown field', { name: 'x', owner: 'bob' }, 'extra_forbidden', ['body', 'owner']],
    ['user_id cannot be chosen', { user_id: 'bob' }, 'extra_forbidden', ['body', 'user_id']],
    ['name too long', { name: 'x'.repeat(201) }, 'string_too_long', ['body', 'name']],
    ['name not a string', { name: 5 }, 'string_type', ['body', 'name']],
    ['params not an object', { params: [1, 2] }, 'dict_type', ['body', 'params']],
  ];
  for (const [name, body, type, loc] of cases) {
    await t.test(name, async () => {
      const r = await server.request('POST', '/training/start', { headers: { 'X-API-Key': key }, body: body as object });
      assert.equal(r.status, 422);
      assert.deepEqual(r.json.detail[0].loc, loc);
      assert.equal(r.json.detail[0].type, type);
    });
  }
  assert.equal((await server.request('POST', '/training/start', { headers: { 'X-API-Key': key }, body: '{"name":' })).json.detail[0].type, 'json_invalid');
  assert.deepEqual(readdirSync(path.join(dir, 'training', 'runs')), [], 'nothing was written');
});

test('two users: no cross-user read, list or delete through any route or carrier', async (t) => {
  const dir = await tempDataDir(t);
  const alice = await carriersFor(dir, 'alice');
  const bob = await carriersFor(dir, 'bob');
  const server = await startServer(t, dir);
  const a0 = alice[0] as Carrier;
  const aliceRuns: string[] = [];
  for (const carrier of alice) {
    const r = await carrier.call(server, 'POST', '/training/start', { name: `via ${carrier.name}` });
    assert.equal(r.status, 201, carrier.name);
    assert.equal(r.json.user_id, 'alice', carrier.name);
    aliceRuns.push(r.json.run_id);
  }
  const bobRun = (await (bob[1] as Carrier).call(server, 'POST', '/training/start', { name: 'bob' })).json.run_id as string;
  const missingGet = await a0.call(server, 'GET', `/training/runs/${MISSING}`);
  assert.equal(missingGet.status, 404);
  const asMissing = (detail: string, runId: string) => detail.replace(runId, MISSING);

  for (const carrier of bob) {
    await t.test(`bob with ${carrier.name}`, async () => {
      const list = await carrier.call(server, 'GET', '/training/runs');
      assert.equal(list.status, 200);
      assert.deepEqual(list.json.map((r: { run_id: string }) => r.run_id), [bobRun], 'bob lists only his own run');
      for (const runId of aliceRuns) {
        for (const method of ['GET', 'DELETE']) {
          const r = await carrier.call(server, method, `/training/runs/${runId}`);
          assert.equal(r.status, 404, `${method} ${runId}`);
          assert.equal(asMissing(r.json.detail, runId), missingGet.json.detail, 'exactly as a run that does not exist');
        }
      }
    });
  }
  for (const carrier of alice) {
    const list = await carrier.call(server, 'GET', '/training/runs');
    assert.deepEqual(list.json.map((r: { run_id: string }) => r.run_id).sort(), [...aliceRuns].sort(), `alice still has every run (${carrier.name})`);
    assert.ok(list.json.every((r: { user_id: string }) => r.user_id === 'alice'));
    assert.equal((await carrier.call(server, 'GET', `/training/runs/${bobRun}`)).status, 404);
  }
  for (const runId of aliceRuns) assert.ok(existsSync(path.join(dir, 'training', 'runs', `${runId}.json`)), 'bob deleted nothing');

  const noUser = await server.get('/training/runs');
  assert.equal(noUser.status, 200);
  assert.deepEqual(noUser.json, [], 'without a user the list is a bare empty array');
  assert.equal((await server.get(`/training/runs/${aliceRuns[0]}`)).status, 404, 'without a user no run is visible');
  assert.equal((await server.request('DELETE', `/training/runs/${aliceRuns[0]}`)).status, 403, 'deleting needs a credential');
  assert.equal((await server.get('/training/runs', { 'X-API-Key': 'est_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' })).status, 403, 'an invalid credential is not "no user"');
});

test('DELETE /training/runs/{run_id} answers 204 with no body, then 404', async (t) => {
  const dir = await tempDataDir(t);
  const { key } = await createKey(dir, { userId: 'alice' });
  const server = await startServer(t, dir);
  const headers = { 'X-API-Key': key };
  const { run_id: runId } = (await server.request('POST', '/training/start', { headers, body: {} })).json;
  assert.equal((await server.get(`/training/runs/${runId}`, headers)).json.run_id, runId);
  const deleted = await server.request('DELETE', `/training/runs/${runId}`, { headers });
  assert.equal(deleted.status, 204);
  assert.equal(deleted.text, '');
  assert.equal(existsSync(path.join(dir, 'training', 'runs', `${runId}.json`)), false);
  assert.equal((await server.request('DELETE', `/training/runs/${runId}`, { headers })).status, 404);
  assert.equal((await server.get(`/training/runs/${runId}`, headers)).status, 404);
  assert.deepEqual((await server.get('/training/runs', headers)).json, []);
});

test('GET /training/runs skips corrupt and foreign files and lists newest first', async (t) => {
  const dir = await tempDataDir(t);
  const { key } = await createKey(dir, { userId: 'alice' });
  const server = await startServer(t, dir);
  const headers = { 'X-API-Key': key };
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await server.request('POST', '/training/start', { headers, body: { name: `r${i}` } })).json.run_id);
  const runs = path.join(dir, 'training', 'runs');
  const copy = JSON.parse(readFileSync(path.join(runs, `${ids[0]}.json`), 'utf8'));
  await writeFile(path.join(runs, 'run_aaaaaaaaaaaaaaaa.json'), '{"run_id":"run_aaaaaaaaaaaaaaaa","user_id":"ali');
  await writeFile(path.join(runs, 'run_bbbbbbbbbbbbbbbb.json'), JSON.stringify({ ...copy, run_id: ids[1] }), 'utf8');
  await writeFile(path.join(runs, 'notes.txt'), 'hello');
  await writeFile(path.join(runs, 'RUN_CCCCCCCCCCCCCCCC.json'), JSON.stringify(copy));
  const r = await server.get('/training/runs', headers);
  assert.equal(r.status, 200);
  const listed = r.json.map((run: { created_at: string; run_id: string }) => run.run_id);
  assert.deepEqual([...listed].sort(), [...ids].sort());
  const times = r.json.map((run: { created_at: string }) => run.created_at);
  assert.deepEqual(times, [...times].sort().reverse(), 'newest first');
  assert.equal((await server.get('/training/runs/run_aaaaaaaaaaaaaaaa', headers)).status, 404, 'a corrupt file is not found');
  assert.equal((await server.get('/training/runs/run_bbbbbbbbbbbbbbbb', headers)).status, 404, 'a file whose run_id differs from its name is not found');
});

test('estate training start|list|show|delete --user, locally and in remote mode', async (t) => {
  const dir = await tempDataDir(t);
  const run = (...args: string[]) => runEstate(['training', ...args, '--data-dir', dir]);
  const started = await run('start', '--user', 'alice', '--name', 'cli', '--params', '{"epochs":2}', '--json');
  assert.equal(started.code, 0, started.stderr);
  assert.deepEqual([started.json.user_id, started.json.name, started.json.params], ['alice', 'cli', { epochs: 2 }]);
  const runId = started.json.run_id as string;

  const listed = await run('list', '--user', 'alice', '--json');
  assert.deepEqual(listed.json.map((r: { run_id: string }) => r.run_id), [runId]);
  assert.deepEqual((await run('list', '--user', 'bob', '--json')).json, []);
  assert.equal((await run('show', runId, '--user', 'alice', '--json')).json.run_id, runId);
  const table = await run('list', '--user', 'alice');
  assert.ok(table.stdout.includes(runId));
  const foreign = await run('show', runId, '--user', 'bob');
  assert.equal(foreign.code, 3, `another user: not found (${foreign.stderr})`);
  assert.equal((await run('delete', runId, '--user', 'bob')).code, 3);

  const refusals: [string, string[], RegExp][] = [
    ['start without --user', ['start'], /training start needs --user USER/],
    ['list without --user', ['list'], /training list needs --user USER/],
    ['a bad user', ['list', '--user', '../x'], /invalid user/],
    ['params not JSON', ['start', '--user', 'alice', '--params', '{nope'], /--params/],
    ['an unknown option', ['start', '--user', 'alice', '--owner', 'bob'], /unknown option/],
  ];
  for (const [name, args, message] of refusals) {
    await t.test(name, async () => {
      const r = await run(...args);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, message);
      assert.equal(r.stderr.trim().split('\n')[0]?.startsWith('estate: '), true);
    });
  }

  const { key: aliceKey } = await createKey(dir, { userId: 'alice' });
  const server = await startServer(t, dir);
  const remote = (...args: string[]) => runEstate(['training', ...args, '--url', server.url, '--api-key', aliceKey]);
  const viaHttp = await server.get('/training/runs', { 'X-API-Key': aliceKey });
  const remoteList = await remote('list', '--json');
  assert.equal(remoteList.code, 0, remoteList.stderr);
  assert.deepEqual(remoteList.json, viaHttp.json, 'the same body as the route');
  const remoteStart = await remote('start', '--user', 'bob', '--json');
  assert.equal(remoteStart.json.user_id, 'alice', 'in remote mode the credential decides, --user is ignored');

  const deleted = await run('delete', runId, '--user', 'alice');
  assert.equal(deleted.code, 0, deleted.stderr);
  assert.equal(deleted.stdout, '', '204: nothing on stdout');
  assert.equal((await remote('delete', remoteStart.json.run_id, '--json')).stdout, '');
  assert.deepEqual((await remote('list', '--json')).json, []);
});
