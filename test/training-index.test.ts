import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { readFile, rm, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer, type TestServer } from './helpers/server.ts';

// Listing one's training runs reads only one's own run files, through a
// per-user index (training/users/, training/index.json) that estate keeps
// and rebuilds from the run files whenever it is missing, corrupt or stale.

const runsDir = (dir: string) => path.join(dir, 'training', 'runs');
const usersDir = (dir: string) => path.join(dir, 'training', 'users');

/** A run file as estate writes it, put there by hand (as a run written before the index existed). */
async function plantRun(dir: string, userId: string, name = 'planted'): Promise<string> {
  const runId = `run_${randomBytes(8).toString('hex')}`;
  const at = new Date().toISOString();
  const run = { run_id: runId, user_id: userId, status: 'queued', name, model: null, dataset: null, params: { pad: 'x'.repeat(2000) }, created_at: at, updated_at: at };
  await writeFile(path.join(runsDir(dir), `${runId}.json`), `${JSON.stringify(run, null, 2)}\n`, { mode: 0o600 });
  return runId;
}

async function start(server: TestServer, key: string, name: string): Promise<string> {
  const r = await server.request('POST', '/training/start', { headers: { 'X-API-Key': key }, body: { name } });
  assert.equal(r.status, 201, r.text);
  return r.json.run_id as string;
}

async function listIds(server: TestServer, key: string): Promise<string[]> {
  const r = await server.get('/training/runs', { 'X-API-Key': key });
  assert.equal(r.status, 200, r.text);
  return (r.json as { run_id: string }[]).map((run) => run.run_id).sort();
}

/** Whether reading a file here moves its access time (relatime/strictatime, not noatime). */
async function atimeMovesOnRead(dir: string): Promise<boolean> {
  const probe = path.join(dir, 'atime-probe');
  await writeFile(probe, 'x');
  await utimes(probe, new Date('2000-01-01T00:00:00Z'), new Date());
  await readFile(probe);
  return statSync(probe).atimeMs > Date.parse('2001-01-01T00:00:00Z');
}

test('a user lists only their own runs, and reads none of the run files of another user', async (t) => {
  const dir = await tempDataDir(t);
  const [alice, bob, carol] = [await newKey(dir, 'alice'), await newKey(dir, 'bob'), await newKey(dir, 'carol')];
  const server = await startServer(t, dir);
  const bobs: string[] = [];
  for (let i = 0; i < 12; i++) bobs.push(await start(server, bob, `bob ${i}`));
  const alices = [await start(server, alice, 'alice 1'), await start(server, alice, 'alice 2')];

  // Bob's files get an access time in the past: reading any of them would move it.
  const past = new Date('2000-01-01T00:00:00Z');
  for (const id of bobs) await utimes(path.join(runsDir(dir), `${id}.json`), past, statSync(path.join(runsDir(dir), `${id}.json`)).mtime);

  assert.deepEqual(await listIds(server, alice), [...alices].sort());
  assert.deepEqual(await listIds(server, carol), [], 'a user with no runs lists none');
  const cli = await runEstate(['training', 'list', '--user', 'carol', '--json', '--data-dir', dir]);
  assert.equal(cli.code, 0, cli.stderr);
  assert.deepEqual(cli.json, []);
  const cliAlice = await runEstate(['training', 'list', '--user', 'alice', '--json', '--data-dir', dir]);
  assert.deepEqual((cliAlice.json as { run_id: string }[]).map((r) => r.run_id).sort(), [...alices].sort());

  if (await atimeMovesOnRead(path.dirname(dir))) {
    for (const id of bobs) assert.equal(statSync(path.join(runsDir(dir), `${id}.json`)).atimeMs, past.getTime(), `bob's ${id} was not read`);
  } else {
    t.diagnostic('this file system does not update access times: the "not read" check is skipped');
  }
  assert.deepEqual(await listIds(server, bob), [...bobs].sort(), 'bob still sees all of his');
});

test('the listing stays right when the index is deleted, corrupt, or stale', async (t) => {
  const dir = await tempDataDir(t);
  const [alice, bob] = [await newKey(dir, 'alice'), await newKey(dir, 'bob')];
  const server = await startServer(t, dir);
  const alices = [await start(server, alice, 'a1'), await start(server, alice, 'a2')];
  const bobs = [await start(server, bob, 'b1'), await start(server, bob, 'b2'), await start(server, bob, 'b3')];
  const expect = async (what: string) => {
    assert.deepEqual(await listIds(server, alice), [...alices].sort(), `alice, ${what}`);
    assert.deepEqual(await listIds(server, bob), [...bobs].sort(), `bob, ${what}`);
  };
  await expect('as written');
  const userFiles = () => readdirSync(usersDir(dir)).filter((f) => f.endsWith('.json'));
  assert.equal(userFiles().length, 2, 'one index file per user');

  await t.test('one user index deleted', async () => {
    for (const f of userFiles()) await rm(path.join(usersDir(dir), f));
    await expect('index files deleted');
    assert.equal(userFiles().length, 2, 'rebuilt');
  });
  await t.test('the whole index deleted', async () => {
    await rm(usersDir(dir), { recursive: true });
    await rm(path.join(dir, 'training', 'index.json'));
    await expect('index deleted');
  });
  await t.test('index files corrupt', async () => {
    for (const f of userFiles()) await writeFile(path.join(usersDir(dir), f), '{"user_id": "alice", "run_ids": [tor');
    await writeFile(path.join(dir, 'training', 'index.json'), 'garbage');
    await expect('index corrupt');
    for (const f of userFiles()) await writeFile(path.join(usersDir(dir), f), '[]');
    await expect('index files of the wrong shape');
  });
  await t.test('a run file written by another program (stale index)', async () => {
    alices.push(await plantRun(dir, 'alice', 'by hand'));
    await expect('a run added behind estate');
  });
  await t.test('an index that names runs of someone else or none at all', async () => {
    const own = userFiles();
    for (const f of own) {
      const file = path.join(usersDir(dir), f);
      const index = JSON.parse(await readFile(file, 'utf8')) as { user_id: string; run_ids: string[] };
      // Written in place (the folders' times do not move): estate must still check each run file.
      await writeFile(file, JSON.stringify({ ...index, run_ids: [...index.run_ids, ...alices, ...bobs, 'run_0000000000000000', '../keys'] }));
    }
    await expect('index names foreign and missing runs');
  });
  await t.test('a run deleted behind estate', async () => {
    const gone = bobs.pop() as string;
    await rm(path.join(runsDir(dir), `${gone}.json`));
    await expect('a run removed behind estate');
  });
  await t.test('the CLI agrees', async () => {
    await rm(usersDir(dir), { recursive: true });
    const r = await runEstate(['training', 'list', '--user', 'bob', '--json', '--data-dir', dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual((r.json as { run_id: string }[]).map((x) => x.run_id).sort(), [...bobs].sort());
  });
});

test('runs written before the index existed are listed for their owners', async (t) => {
  const dir = await tempDataDir(t);
  const alices = [await plantRun(dir, 'alice'), await plantRun(dir, 'alice')];
  const bobs = [await plantRun(dir, 'bob')];
  await writeFile(path.join(runsDir(dir), 'run_aaaaaaaaaaaaaaaa.json'), '{"run_id": "run_aaaaaaaaaaaaaaaa", "user_id": ');
  const server = await startServer(t, dir);
  assert.deepEqual(await listIds(server, await newKey(dir, 'alice')), [...alices].sort());
  assert.deepEqual(await listIds(server, await newKey(dir, 'bob')), bobs);
  assert.deepEqual(await listIds(server, await newKey(dir, 'carol')), []);
});

test('concurrent starts and deletes from a server and CLI processes leave a complete index', async (t) => {
  const dir = await tempDataDir(t);
  const [alice, bob] = [await newKey(dir, 'alice'), await newKey(dir, 'bob')];
  const server = await startServer(t, dir);
  const seeded = [await start(server, bob, 'seed 1'), await start(server, bob, 'seed 2')];
  const http = Array.from({ length: 8 }, (_, i) => start(server, i % 2 ? alice : bob, `http ${i}`));
  const cli = Array.from({ length: 3 }, (_, i) => runEstate(['training', 'start', '--user', 'alice', '--name', `cli ${i}`, '--json', '--data-dir', dir]));
  const deleted = server.request('DELETE', `/training/runs/${seeded[0]}`, { headers: { 'X-API-Key': bob } });
  const [httpIds, cliRuns, del] = await Promise.all([Promise.all(http), Promise.all(cli), deleted]);
  assert.equal(del.status, 204);
  for (const r of cliRuns) assert.equal(r.code, 0, r.stderr);
  const aliceIds = [...httpIds.filter((_, i) => i % 2), ...cliRuns.map((r) => (r.json as { run_id: string }).run_id)];
  const bobIds = [seeded[1] as string, ...httpIds.filter((_, i) => i % 2 === 0)];
  assert.deepEqual(await listIds(server, alice), aliceIds.sort());
  assert.deepEqual(await listIds(server, bob), bobIds.sort());
  const leftovers = readdirSync(path.join(dir, 'training'), { recursive: true, encoding: 'utf8' }).filter((f) => /\.(lock|break|tmp)$/.test(f));
  assert.deepEqual(leftovers, [], 'no lock or temp file is left behind');
});
