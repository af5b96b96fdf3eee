import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT, tempDataDir } from './helpers/data-dir.ts';

// bin/estate compiles the bundle with a V8 code cache beside it
// (dist/estate.cjs.cache), written when it is missing or rejected. It is
// written by a command that starts, works and ends, never by one that ran
// until stopped (serve, --follow, --watch): that run compiled the server,
// not what the next start needs. Each test works on its own copy of the
// built CLI, so the project's cache is left alone.

async function cliCopy(t: test.TestContext): Promise<{ bin: string; cache: string }> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'estate-code-cache-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  await mkdir(path.join(root, 'bin'));
  await mkdir(path.join(root, 'dist'));
  for (const file of ['bin/estate', 'bin/package.json', 'dist/estate.cjs', 'package.json']) await copyFile(path.join(ROOT, file), path.join(root, file));
  return { bin: path.join(root, 'bin', 'estate'), cache: path.join(root, 'dist', 'estate.cjs.cache') };
}

const exists = (file: string) => stat(file).then(() => true, () => false);

test('a served run leaves the code cache unwritten; the next short command writes it', async (t) => {
  const { bin, cache } = await cliCopy(t);
  const dir = await tempDataDir(t);
  const child = spawn(process.execPath, [bin, 'serve', '--data-dir', dir, '--host', '127.0.0.1', '--port', '0', '--quiet'], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => void child.kill('SIGKILL'));
  let stdout = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
      if (stdout.includes(' serving ')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code} before listening`)));
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  assert.equal(await exited, 0);
  assert.equal(await exists(cache), false, 'serve wrote the code cache');

  const run = spawnSync(process.execPath, [bin, 'trends', '--limit', '1', '--json', '--data-dir', dir], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.ok((await stat(cache)).size > 0, 'a short command writes the code cache');
});

test('a cache made under other V8 flags is rejected and written anew by a short command', async (t) => {
  const { bin, cache } = await cliCopy(t);
  const dir = await tempDataDir(t);
  const run = (flags: string[]) => spawnSync(process.execPath, [...flags, bin, 'trends', '--limit', '1', '--json', '--data-dir', dir], { encoding: 'utf8' });
  assert.equal(run([]).status, 0);
  const first = await stat(cache);
  assert.equal(run([]).status, 0);
  assert.equal((await stat(cache)).mtimeMs, first.mtimeMs, 'an accepted cache is left as it is');
  const other = run(['--max-old-space-size=512']);
  assert.equal(other.status, 0, other.stderr);
  assert.deepEqual(JSON.parse(other.stdout).items, []);
  assert.notEqual((await stat(cache)).mtimeMs, first.mtimeMs, 'a rejected cache is written anew');
});
