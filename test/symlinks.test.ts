import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { DEMO_FIXTURE, tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';

// A symbolic link never takes a read or a write out of the data dir: a link
// in a file's place, or a folder of the data dir that is a link leading
// outside it, is refused with 503 (CLI: one line, exit 1) whose detail names
// the file or folder relative to the data dir and never where the link
// points; the file outside is neither read nor changed.

const COMPLETION = { task_id: 'T-1', board: 'ops', assignee: 'cron', title: 'Task 1' };
const COMPLETE_ARGS = ['work', 'complete', '--task-id', 'T-1', '--board', 'ops', '--assignee', 'cron', '--title', 'Task 1'];
const SECRET_LINE = `${JSON.stringify({ ts: '2026-11-21T10:00:00Z', secret: 'OUTSIDE-SECRET' })}\n`;

/** A data dir, a key, and a folder beside the data dir (outside it) holding a file of JSON lines. */
async function setup(t: Parameters<typeof tempDataDir>[0]) {
  const dir = await tempDataDir(t);
  const root = path.dirname(dir);
  const outside = path.join(root, 'elsewhere');
  await mkdir(outside);
  const outsideFile = path.join(outside, 'target.jsonl');
  await writeFile(outsideFile, SECRET_LINE);
  const key = await newKey(dir, 'cron');
  return { dir, root, outside, outsideFile, key };
}

/** Every file under `dir` with its size and content, to prove nothing there changed. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of (await readdir(dir, { recursive: true })).sort()) {
    const file = path.join(dir, name);
    const info = await stat(file);
    out[name] = info.isFile() ? `${info.size}:${info.mtimeMs}:${await readFile(file, 'utf8')}` : 'dir';
  }
  return out;
}

/** The refusal: 503, its detail naming `name`, nothing of what lies outside. */
function assertRefused(r: { status: number; text: string; json: any }, name: RegExp, root: string): void {
  assert.equal(r.status, 503, r.text);
  assert.match(r.json.detail, name);
  assert.match(r.json.detail, /symbolic link/);
  assert.ok(!r.text.includes(root), `no absolute path: ${r.text}`);
  assert.ok(!r.text.includes('elsewhere') && !r.text.includes('OUTSIDE-SECRET'), `nothing of the target: ${r.text}`);
}

function assertCliRefused(r: { code: number | null; stdout: string; stderr: string }, name: RegExp, root: string): void {
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /^estate: [^\n]*symbolic link[^\n]*\n$/);
  assert.match(r.stderr, name);
  assert.ok(!r.stderr.includes(root) && !r.stderr.includes('elsewhere') && !r.stderr.includes('OUTSIDE-SECRET'), r.stderr);
  assert.ok(!r.stdout.includes('OUTSIDE-SECRET'), r.stdout);
}

test('a completion log that is a link: POST /work/complete and `estate work complete` refuse, the file outside is unchanged', async (t) => {
  const { dir, root, outside, outsideFile, key } = await setup(t);
  await mkdir(path.join(dir, 'work'), { recursive: true });
  await symlink(outsideFile, path.join(dir, 'work', 'completions.jsonl'));
  const before = await snapshot(outside);
  const server = await startServer(t, dir);

  const posted = await server.request('POST', '/work/complete', { headers: { 'X-API-Key': key }, body: COMPLETION });
  assertRefused(posted, /^work\/completions\.jsonl in the data dir is a symbolic link/, root);
  const feed = await server.get('/work/feed', { 'X-API-Key': key });
  assertRefused(feed, /^work\/completions\.jsonl /, root);

  const cli = await runEstate([...COMPLETE_ARGS, '--data-dir', dir]);
  assertCliRefused(cli, /work\/completions\.jsonl in the data dir/, root);
  const remote = await runEstate([...COMPLETE_ARGS, '--url', server.url, '--api-key', key]);
  assertCliRefused(remote, /work\/completions\.jsonl in the data dir/, root);

  assert.deepEqual(await snapshot(outside), before, 'nothing outside the data dir changed');
});

test('a dangling link in the completion log\'s place: nothing is created where it points', async (t) => {
  const { dir, root, outside, key } = await setup(t);
  await mkdir(path.join(dir, 'work'), { recursive: true });
  const target = path.join(outside, 'created-through-link.jsonl');
  await symlink(target, path.join(dir, 'work', 'completions.jsonl'));
  const server = await startServer(t, dir);
  const posted = await server.request('POST', '/work/complete', { headers: { 'X-API-Key': key }, body: COMPLETION });
  assertRefused(posted, /^work\/completions\.jsonl in the data dir is a symbolic link/, root);
  const cli = await runEstate([...COMPLETE_ARGS, '--data-dir', dir]);
  assertCliRefused(cli, /work\/completions\.jsonl/, root);
  await assert.rejects(stat(target), { code: 'ENOENT' });
});

test('trends.jsonl linked to a file of JSON lines outside: /trends and `estate trends` refuse and read nothing of it', async (t) => {
  const { dir, root, outsideFile, key } = await setup(t);
  await symlink(outsideFile, path.join(dir, 'trends.jsonl'));
  const server = await startServer(t, dir);
  assertRefused(await server.get('/trends', { 'X-API-Key': key }), /^trends\.jsonl in the data dir is a symbolic link/, root);
  assertCliRefused(await runEstate(['trends', '--data-dir', dir]), /trends\.jsonl in the data dir/, root);
  assertCliRefused(await runEstate(['trends', '--json', '--data-dir', dir]), /trends\.jsonl in the data dir/, root);
});

test('a state file that is a link: /state/{name} and `estate state` refuse', async (t) => {
  const { dir, root, outside, key } = await setup(t);
  await writeFile(path.join(outside, 'heartbeat.json'), JSON.stringify({ nodes: [{ name: 'OUTSIDE-SECRET', last_seen: '2026-11-21T10:00:00Z' }] }));
  await mkdir(path.join(dir, 'state'), { recursive: true });
  await symlink(path.join(outside, 'heartbeat.json'), path.join(dir, 'state', 'heartbeat.json'));
  const server = await startServer(t, dir);
  assertRefused(await server.get('/state/heartbeat', { 'X-API-Key': key }), /^state\/heartbeat\.json in the data dir is a symbolic link/, root);
  assertRefused(await server.get('/events', { 'X-API-Key': key }), /^state\/heartbeat\.json /, root);
  assertCliRefused(await runEstate(['state', 'heartbeat', '--data-dir', dir]), /state\/heartbeat\.json in the data dir/, root);
});

test('a `state` or `work` folder that is a link out of the data dir: reads and writes refuse, nothing outside is read or made', async (t) => {
  const { dir, root, outside, key } = await setup(t);
  const outsideState = path.join(outside, 'state');
  const outsideWork = path.join(outside, 'work');
  await mkdir(outsideState);
  await mkdir(outsideWork);
  await writeFile(path.join(outsideState, 'heartbeat.json'), JSON.stringify({ nodes: [{ name: 'OUTSIDE-SECRET', last_seen: '2026-11-21T10:00:00Z' }] }));
  await rm(path.join(dir, 'state'), { recursive: true, force: true });
  await rm(path.join(dir, 'work'), { recursive: true, force: true });
  await symlink(outsideState, path.join(dir, 'state'));
  await symlink(outsideWork, path.join(dir, 'work'));
  const before = await snapshot(outside);
  const server = await startServer(t, dir);

  assertRefused(await server.get('/state/heartbeat', { 'X-API-Key': key }), /^state in the data dir is a symbolic link leading out of it/, root);
  const posted = await server.request('POST', '/work/complete', { headers: { 'X-API-Key': key }, body: COMPLETION });
  assertRefused(posted, /^work in the data dir is a symbolic link leading out of it/, root);
  assertCliRefused(await runEstate(['state', 'heartbeat', '--data-dir', dir]), /state in the data dir/, root);
  assertCliRefused(await runEstate([...COMPLETE_ARGS, '--data-dir', dir]), /work in the data dir/, root);

  assert.deepEqual(await snapshot(outside), before, 'no file was read into an answer, written or created outside');
});

test('keys.json and estate.config.json that are links are refused, not read', async (t) => {
  const { dir, root, outside, key } = await setup(t);
  // keys.json: the real one moves outside and a link takes its place.
  await rename(path.join(dir, 'keys.json'), path.join(outside, 'keys.json'));
  await symlink(path.join(outside, 'keys.json'), path.join(dir, 'keys.json'));
  const server = await startServer(t, dir);
  // The answer names the credential store, not its file (the server's log does).
  assertRefused(await server.get('/trends', { 'X-API-Key': key }), /^the credential store is a symbolic link, which estate never follows: no API key can be checked/, root);

  await writeFile(path.join(outside, 'estate.config.json'), JSON.stringify({ node_name: 'OUTSIDE-SECRET' }));
  await symlink(path.join(outside, 'estate.config.json'), path.join(dir, 'estate.config.json'));
  assertCliRefused(await runEstate(['trends', '--data-dir', dir]), /estate\.config\.json in the data dir is a symbolic link/, root);
  // --config names the operator's own file: a link there is followed.
  const own = await runEstate(['trends', '--data-dir', dir, '--config', path.join(dir, 'estate.config.json')]);
  assert.equal(own.code, 0, own.stderr);
});

test('a data dir that is itself a link, and links to folders inside it, work as before', async (t) => {
  const { dir, root, key } = await setup(t);
  const linked = path.join(root, 'linked-data');
  await symlink(dir, linked);
  await writeFile(path.join(dir, 'trends.jsonl'), SECRET_LINE);
  const server = await startServer(t, linked);
  const trends = await server.get('/trends', { 'X-API-Key': key });
  assert.equal(trends.status, 200, trends.text);
  assert.equal(trends.json.count, 1);
  const posted = await server.request('POST', '/work/complete', { headers: { 'X-API-Key': key }, body: COMPLETION });
  assert.equal(posted.status, 201, posted.text);
  const cli = await runEstate(['work', 'feed', '--json', '--data-dir', linked]);
  assert.equal(cli.code, 0, cli.stderr);
  assert.equal(cli.json.count, 1);

  await mkdir(path.join(dir, 'state-v2'));
  await writeFile(path.join(dir, 'state-v2', 'heartbeat.json'), '{"nodes": []}');
  await rm(path.join(dir, 'state'), { recursive: true, force: true });
  await symlink('state-v2', path.join(dir, 'state'));
  const state = await server.get('/state/heartbeat', { 'X-API-Key': key });
  assert.equal(state.status, 200, state.text);
  assert.equal(state.json.content, '{"nodes": []}');
});

test('a link loop in a log\'s place is the same refusal; aggregate pages name the refused source, not a path', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const key = await newKey(dir);
  for (const file of ['builds.jsonl', 'health-pulse.jsonl']) {
    await rm(path.join(dir, file), { force: true });
    await symlink(file, path.join(dir, file));
  }
  const server = await startServer(t, dir);
  assertRefused(await server.get('/builds', { 'X-API-Key': key }), /^builds\.jsonl in the data dir is a symbolic link/, path.dirname(dir));
  const status = await server.get('/status', { 'X-API-Key': key });
  assert.equal(status.status, 200, status.text);
  assert.match(status.text, /health-pulse\.jsonl in the data dir is a symbolic link/);
  assert.ok(!status.text.includes(path.dirname(dir)), status.text);
});

test('a `training` folder that is a link out of the data dir: starting and listing runs refuse, nothing is made outside', async (t) => {
  const { dir, root, outside, key } = await setup(t);
  const outsideTraining = path.join(outside, 'training');
  await mkdir(outsideTraining);
  await rm(path.join(dir, 'training'), { recursive: true, force: true });
  await symlink(outsideTraining, path.join(dir, 'training'));
  const before = await snapshot(outside);
  const server = await startServer(t, dir);
  assertRefused(await server.request('POST', '/training/start', { headers: { 'X-API-Key': key }, body: {} }), /^training(\/runs)? in the data dir is a symbolic link leading out of it/, root);
  assertRefused(await server.get('/training/runs', { 'X-API-Key': key }), /^training(\/runs)? in the data dir/, root);
  assertCliRefused(await runEstate(['training', 'start', '--user', 'cron', '--data-dir', dir]), /training(\/runs)? in the data dir/, root);
  assert.deepEqual(await snapshot(outside), before);
});
