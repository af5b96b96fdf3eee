import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';
import { PATIENCE_MS } from './helpers/wait-until.ts';

/** Generous: the scripts are node processes, slow to start on a loaded machine. Only the hanging one waits for it. */
const TIMEOUT_MS = 10_000;

/** Statistics scripts, written into the data dir; each appends a line to runs.log when it starts. */
const SCRIPTS: Record<string, string> = {
  'ok.mjs': `import { appendFileSync } from 'node:fs';
appendFileSync('runs.log', 'run\\n');
process.stdout.write(JSON.stringify({ visitors: 42, pages: { '/': 40, '/about': 2 }, argv: process.argv.slice(2), cwd: process.cwd() }));`,
  'garbage.mjs': `console.log('visitors: 42 (this is not JSON)');`,
  'empty.mjs': ``,
  'fail.mjs': `console.error('reading access.log'); console.error('boom: no database'); process.exit(3);`,
  'big.mjs': `process.stdout.write('"' + 'x'.repeat(2 * 1024 * 1024) + '"');`,
  'hang.mjs': `import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
const grandchild = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
writeFileSync('pids.json', JSON.stringify([process.pid, grandchild.pid]));
setInterval(() => {}, 1000);`,
  'stats.sh': `#!/bin/sh\necho '{"from": "sh", "cwd": "'"$(pwd)"'"}'\n`,
};

async function estate(t: Parameters<typeof tempDataDir>[0], command: string[] | undefined, extra: object = {}) {
  const dir = await tempDataDir(t);
  for (const [name, text] of Object.entries(SCRIPTS)) await writeFile(path.join(dir, name), text);
  await chmod(path.join(dir, 'stats.sh'), 0o755);
  const config = command ? { stats: { command, timeout_ms: TIMEOUT_MS, cache_s: 300, ...extra } } : {};
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify(config));
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const runs = async () => (existsSync(path.join(dir, 'runs.log')) ? (await readFile(path.join(dir, 'runs.log'), 'utf8')).split('\n').length - 1 : 0);
  return { dir, runs, get: (route: string, headers: Record<string, string> = {}) => server.get(route, { 'X-API-Key': key, ...headers }) };
}

const node = process.execPath;

test('/stats runs the command (argv, no shell) in the data dir and returns its JSON', async (t) => {
  const { dir, get, runs } = await estate(t, [node, 'ok.mjs', '$(touch pwned)', '; echo hi', '*']);
  const r = await get('/stats');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json.data, { visitors: 42, pages: { '/': 40, '/about': 2 }, argv: ['$(touch pwned)', '; echo hi', '*'], cwd: dir });
  assert.ok(!Number.isNaN(Date.parse(r.json.ran_at)));
  assert.equal(typeof r.json.duration_ms, 'number');
  assert.equal(existsSync(path.join(dir, 'pwned')), false, 'no shell ever saw the arguments');
  assert.equal(await runs(), 1);
});

test('a relative command path resolves against the data dir', async (t) => {
  const { dir, get } = await estate(t, ['./stats.sh']);
  const r = await get('/stats');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json.data, { from: 'sh', cwd: dir });
});

test('a failing statistics command is a 502 with a clear detail', async (t) => {
  const cases: [string, string[], RegExp][] = [
    ['garbage', [node, 'garbage.mjs'], /^the statistics command \(.*garbage\.mjs\) printed output that is not JSON \(.*\): visitors: 42 \(this is not JSON\)$/],
    ['nothing', [node, 'empty.mjs'], /printed nothing; it must print one JSON document on stdout$/],
    ['exit 3', [node, 'fail.mjs'], /exited with code 3: boom: no database$/],
    ['too much', [node, 'big.mjs'], /printed more than 1048576 bytes and was killed$/],
    ['missing', ['./nope.py'], /^cannot run the statistics command \(\.\/nope\.py\): .*nope\.py not found \(a relative path resolves against the data dir/],
    ['not executable', ['./ok.mjs'], /^cannot run the statistics command \(\.\/ok\.mjs\): spawn .*EACCES/],
  ];
  for (const [name, command, detail] of cases) {
    await t.test(name, async (t) => {
      const { get } = await estate(t, command);
      const r = await get('/stats');
      assert.equal(r.status, 502, r.text);
      assert.match(r.json.detail, detail);
    });
  }
});

test('a hanging statistics command is killed, with what it started, and answered 504 within the bound', async (t) => {
  // TIMEOUT_MS: long enough for the script to start its own child and write their pids even on a machine as busy as CI's.
  const { dir, get } = await estate(t, [node, 'hang.mjs']);
  // The command never ends by itself: an answer at all is estate killing it at stats.timeout_ms, which the detail names.
  const r = await get('/stats');
  assert.equal(r.status, 504, r.text);
  assert.match(r.json.detail, /hang\.mjs\) did not finish within 10000 ms \(stats\.timeout_ms\) and was killed$/);
  const pids = JSON.parse(await readFile(path.join(dir, 'pids.json'), 'utf8')) as number[];
  assert.equal(pids.length, 2);
  for (const pid of pids) assert.equal(await diesWithin(pid, PATIENCE_MS), true, `process ${pid} is still running`);
});

test('statistics are cached for cache_s; a failure is not', async (t) => {
  const cached = await estate(t, [node, 'ok.mjs']);
  const answers = await Promise.all([cached.get('/stats'), cached.get('/stats'), cached.get('/stats')]);
  assert.ok(answers.every((a) => a.status === 200));
  assert.equal((await cached.get('/stats')).json.ran_at, answers[0]?.json.ran_at);
  assert.equal(await cached.runs(), 1, 'one run for every call within cache_s');

  const uncached = await estate(t, [node, 'ok.mjs'], { cache_s: 0 });
  const first = await uncached.get('/stats');
  const etag = first.headers.get('etag') as string;
  assert.match(etag, /^W\//, 'a weak ETag: the time of the run is left out of it');
  // The command runs again with the same output: the same ETag, so a poller gets a 304.
  const again = await uncached.get('/stats', { 'If-None-Match': etag });
  assert.equal(again.status, 304);
  assert.equal(await uncached.runs(), 2);
});

test('/stats without a configured command is 503', async (t) => {
  const { get } = await estate(t, undefined);
  const r = await get('/stats');
  assert.equal(r.status, 503);
  assert.match(r.json.detail, /^statistics are not configured: add "stats"/);
});

test('estate stats prints the same body, and fails with one line and exit 1', async (t) => {
  const ok = await estate(t, [node, 'ok.mjs']);
  const cli = await runEstate(['stats', '--json', '--data-dir', ok.dir]);
  assert.equal(cli.code, 0, cli.stderr);
  assert.equal(cli.json.data.visitors, 42);
  const bad = await estate(t, [node, 'garbage.mjs']);
  const failed = await runEstate(['stats', '--data-dir', bad.dir]);
  assert.equal(failed.code, 1);
  assert.match(failed.stderr, /^estate: the statistics command .* printed output that is not JSON [^\n]*\n$/);
});

/** True once `pid` is gone (or a zombie nobody reaped), polling up to `ms`. */
async function diesWithin(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await sleep(25);
  }
  return !isAlive(pid);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // A zombie (state Z) is dead, only not yet reaped by its new parent.
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}
