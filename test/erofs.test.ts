import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { BIN, runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { failWrites } from './helpers/fail-writes.ts';
import { completionBody, entryBody } from './helpers/records.ts';
import { skipWithout } from './helpers/required-tool.ts';
import { newKey, startServer } from './helpers/server.ts';

// A data dir the file system will not let estate write (a read-only mount,
// EROFS; permissions, EACCES/EPERM) fails each write with 503 and a detail
// naming the errno, never a path (CLI: one line, exit 1), stores nothing,
// and /readyz says so. A full disk is 507 (test/disk-full.test.ts).
// Two variants: a real read-only bind mount in a private mount namespace
// where the machine allows one (root on Linux), and everywhere the errno
// at the write call.

const PRELOAD = path.join(import.meta.dirname, 'helpers', 'fail-writes-preload.mjs');
const EROFS_DETAIL = 'the data dir is on a read-only file system (EROFS): nothing was stored; make it writable and retry';
const cliArgs = (dir: string, id: string) => ['work', 'complete', '--task-id', id, '--board', 'ops', '--assignee', 'cron', '--title', `Task ${id}`, '--data-dir', dir];

/** Every write route, each refused with `status` and `detail`; none leaves a trace. */
async function expectRefused(url: string, key: string, dir: string, status: number, detail: string): Promise<void> {
  const writes: [string, object][] = [
    ['/work/complete', completionBody('ro')],
    ['/publishing/register', entryBody('ro')],
    ['/training/start', { name: 'ro' }],
  ];
  for (const [route, body] of writes) {
    const res = await fetch(url + route, { method: 'POST', headers: { 'X-API-Key': key, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.text();
    assert.equal(res.status, status, `${route}: ${text}`);
    assert.deepEqual(JSON.parse(text), { detail });
    assert.ok(!text.includes(dir), 'no path in the body');
  }
  const ready = await fetch(`${url}/readyz`);
  assert.equal(ready.status, 503);
  assert.match(((await ready.json()) as { detail: string }).detail, /^not ready: data_dir_writable failed \(E[A-Z]+\)$/);
  assert.equal((await fetch(`${url}/healthz`)).status, 200);
  assert.equal((await fetch(`${url}/work/feed`)).status, 200, 'reads still work');
}

test('writes on a read-only file system (simulated EROFS at the write call): 503 naming EROFS, one CLI line with exit 1', async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const restore = await failWrites(t, 'EROFS');
  await expectRefused(server.url, key, dir, 503, EROFS_DETAIL);
  restore();
  const cli = await runEstate(cliArgs(dir, 'cli-ro'), { env: { NODE_OPTIONS: `--import=${PRELOAD}`, ESTATE_TEST_FAIL_WRITES: 'EROFS' } });
  assert.equal(cli.code, 1);
  assert.equal(cli.stderr, `estate: ${EROFS_DETAIL}\n`);
  assert.equal((await readFile(path.join(dir, 'work', 'completions.jsonl'), 'utf8').catch(() => '')), '', 'nothing was stored');
});

test('writes the file system denies (simulated EACCES, EPERM): 503 naming the errno; EDQUOT is 507 like ENOSPC', async (t) => {
  for (const [code, status, detail] of [
    ['EACCES', 503, 'the file system denied access in the data dir (EACCES): nothing was changed; check the owner and mode of the data dir and its files'],
    ['EPERM', 503, 'the file system denied access in the data dir (EPERM): nothing was changed; check the owner and mode of the data dir and its files'],
    ['EDQUOT', 507, 'no space left to write in the data dir (EDQUOT): nothing was stored; free some space and retry'],
  ] as const) {
    await t.test(code, async (t) => {
      const dir = await tempDataDir(t);
      const key = await newKey(dir);
      const server = await startServer(t, dir);
      const restore = await failWrites(t, code);
      await expectRefused(server.url, key, dir, status, detail);
      restore();
      const cli = await runEstate(cliArgs(dir, 'cli'), { env: { NODE_OPTIONS: `--import=${PRELOAD}`, ESTATE_TEST_FAIL_WRITES: code } });
      assert.equal(cli.code, 1);
      assert.equal(cli.stderr, `estate: ${detail}\n`);
    });
  }
});

/** `sh -c script` in a private mount namespace where `dir` is bind-mounted read-only; undefined when this machine does not allow it. */
function readOnlyCommand(dir: string, command: readonly string[]): string[] | undefined {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return undefined;
  const probe = spawnSync('unshare', ['-m', 'sh', '-c', 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1"', 'sh', dir], { stdio: 'ignore' });
  if (probe.status !== 0) return undefined;
  return ['unshare', '-m', 'sh', '-c', 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"', 'sh', dir, ...command];
}

test('writes on a real read-only bind mount: 503 naming EROFS, one CLI line with exit 1, nothing stored', async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir);
  const before = (await readdir(dir, { recursive: true })).sort();
  const cliCommand = readOnlyCommand(dir, [process.execPath, BIN, ...cliArgs(dir, 'cli-ro')]);
  if (skipWithout(t, !cliCommand && 'cannot make a read-only bind mount here (needs root on Linux with unshare, from util-linux); the simulated variant covers the promise')) return;
  const [cmd, ...args] = cliCommand as [string, ...string[]];
  const cli = spawnSync(cmd, args, { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: '/tmp', NO_COLOR: '1' } });
  assert.equal(cli.status, 1, cli.stderr);
  assert.equal(cli.stderr, `estate: ${EROFS_DETAIL}\n`);

  const [serveCmd, ...serveArgs] = readOnlyCommand(dir, [process.execPath, BIN, 'serve', '--data-dir', dir, '--port', '0']) as [string, ...string[]];
  const child = spawn(serveCmd, serveArgs, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', HOME: '/tmp', NO_COLOR: '1' } });
  const exited = new Promise((resolve) => child.on('close', resolve));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  const url = await new Promise<string>((resolve, reject) => {
    const check = () => {
      const m = / at (http:\/\/\S+)\n/.exec(stdout);
      if (m?.[1]) resolve(m[1]);
    };
    child.stdout.on('data', check);
    child.on('close', (code) => reject(new Error(`estate serve exited ${code} before listening`)));
  });
  await expectRefused(url, key, dir, 503, EROFS_DETAIL);
  const ready = await fetch(`${url}/readyz`);
  assert.equal(((await ready.json()) as { detail: string }).detail, 'not ready: data_dir_writable failed (EROFS)');
  child.kill('SIGTERM');
  await exited;
  assert.deepEqual((await readdir(dir, { recursive: true })).sort(), before, 'nothing was written');
});
