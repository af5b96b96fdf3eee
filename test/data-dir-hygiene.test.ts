import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { BIN, cliEnv } from './helpers/cli.ts';
import { completionBody, entryBody } from './helpers/records.ts';
import { startServer } from './helpers/server.ts';
import { waitUntil } from './helpers/wait-until.ts';

// Whatever the umask, everything estate creates in a data dir is private to
// its owner: files 0600, folders 0700. The CLI runs with umask 000 (the
// worst case) and so does the server of this test process.

/** Runs the real CLI under `umask 000`; resolves with its exit code and output. */
function estateUmask0(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', 'umask 000; exec "$@"', 'sh', process.execPath, BIN, ...args], {
      env: cliEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Every entry under `dir` (and `dir` itself) whose mode is not 0700 (folders) or 0600 (files). */
async function loose(dir: string): Promise<string[]> {
  const out: string[] = [];
  const visit = async (p: string) => {
    const info = await lstat(p);
    const mode = info.mode & 0o777;
    if (info.isDirectory()) {
      if (mode !== 0o700) out.push(`${path.relative(dir, p) || '.'}/ ${mode.toString(8)}`);
      for (const name of await readdir(p)) await visit(path.join(p, name));
    } else if (mode !== 0o600) out.push(`${path.relative(dir, p)} ${mode.toString(8)}`);
  };
  await visit(dir);
  return out;
}

test('with umask 000, every file the CLI and the server create in the data dir is 0600 and every folder 0700', async (t) => {
  const root = await mkdtemp(path.join(os.tmpdir(), 'estate-hygiene-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  const dir = path.join(root, 'nested', 'data');
  const cli = async (...args: string[]) => {
    const r = await estateUmask0([...args, '--data-dir', dir]);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    return r;
  };
  assert.equal((await estateUmask0(['init', dir])).code, 0);
  const { key } = JSON.parse((await cli('keys', 'create', '--user', 'alice', '--json')).stdout) as { key: string };
  await cli('token', 'create', '--user', 'alice', '--json');
  await cli('training', 'start', '--user', 'alice', '--json');
  await cli('work', 'complete', '--task-id', 'T-1', '--board', 'ops', '--assignee', 'a', '--title', 't');
  await cli('publish', 'register', '--title', 'T', '--slug', 's', '--content-type', 'note', '--target-site', 'garden');

  const previous = process.umask(0);
  t.after(() => process.umask(previous));
  const server = await startServer(t, dir);
  const writes: [string, object][] = [
    ['/work/complete', completionBody(2, { board: 'fresh-board' })],
    ['/publishing/register', entryBody(2)],
    ['/training/start', {}],
  ];
  for (const [route, body] of writes) assert.equal((await server.request('POST', route, { headers: { 'X-API-Key': key }, body })).status, 201, route);
  assert.equal((await server.get('/readyz')).status, 200);

  const files = await readdir(dir, { recursive: true });
  for (const expected of ['keys.json', 'work/completions.jsonl', 'publishing/entries.jsonl']) assert.ok(files.includes(expected), expected);
  assert.ok(files.some((f) => f.startsWith('training/runs/') && f.endsWith('.json')), 'training runs');
  assert.ok(files.length >= 6, files.join(', '));
  assert.deepEqual(await loose(dir), []);
});

test('estate serve --demo: the copied demo estate is private too', async (t) => {
  const child = spawn('/bin/sh', ['-c', 'umask 000; exec "$@"', 'sh', process.execPath, BIN, 'serve', '--demo', '--port', '0'], {
    env: cliEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((resolve) => child.on('close', resolve));
  t.after(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited;
  });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  await waitUntil('the demo serves', () => /demo key/.test(stdout));
  const dir = /serving (\S+) at http/.exec(stdout)?.[1] as string;
  assert.ok(dir && path.isAbsolute(dir), stdout);
  assert.deepEqual(await loose(dir), []);
  child.kill('SIGTERM');
  assert.equal(await exited, 0);
});
