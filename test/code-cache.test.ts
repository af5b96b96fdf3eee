import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT, tempDataDir } from './helpers/data-dir.ts';
import { cliEnv } from './helpers/cli.ts';

// bin/estate compiles the bundle with a V8 code cache beside it
// (dist/estate.cjs.cache; dist/estate.cjs.<tag>.cache for a node run with
// flags of its own), written when it is missing or rejected. It is written
// by a command that starts, works and ends, never by one that ran until
// stopped (serve, --follow, --watch): that run compiled the server, not what
// the next start needs. Each test works on its own copy of the
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
  const env = cliEnv();
  const child = spawn(process.execPath, [bin, 'serve', '--data-dir', dir, '--host', '127.0.0.1', '--port', '0', '--quiet'], { stdio: ['ignore', 'pipe', 'pipe'], env });
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

  const run = spawnSync(process.execPath, [bin, 'trends', '--limit', '1', '--json', '--data-dir', dir], { encoding: 'utf8', env });
  assert.equal(run.status, 0, run.stderr);
  assert.ok((await stat(cache)).size > 0, 'a short command writes the code cache');
});

test('a run with node flags of its own keeps its code cache apart: runs with and without them do not rewrite each other\'s', async (t) => {
  const { bin, cache } = await cliCopy(t);
  const dir = await tempDataDir(t);
  const run = (flags: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [...flags, bin, 'trends', '--limit', '1', '--json', '--data-dir', dir], { encoding: 'utf8', env: cliEnv(env) });
  assert.equal(run([]).status, 0);
  const plain = await stat(cache);
  assert.equal(run([]).status, 0);
  assert.equal((await stat(cache)).mtimeMs, plain.mtimeMs, 'an accepted cache is left as it is');

  const flagged = run(['--max-old-space-size=512']);
  assert.equal(flagged.status, 0, flagged.stderr);
  assert.deepEqual(JSON.parse(flagged.stdout).items, []);
  const viaEnv = run([], { NODE_OPTIONS: '--max-old-space-size=256' });
  assert.equal(viaEnv.status, 0, viaEnv.stderr);
  assert.equal((await stat(cache)).mtimeMs, plain.mtimeMs, 'the flagless cache is untouched');
  const caches = (await readdir(path.dirname(cache))).filter((n) => n.endsWith('.cache')).sort();
  assert.equal(caches.length, 3, caches.join(', '));
  assert.ok(caches.every((n) => /^estate\.cjs\.([0-9a-f]{8}\.)?cache$/.test(n)), caches.join(', '));
  // Each is taken again by its own kind of run: none is rewritten.
  const times = await Promise.all(caches.map(async (n) => (await stat(path.join(path.dirname(cache), n))).mtimeMs));
  assert.equal(run(['--max-old-space-size=512']).status, 0);
  assert.equal(run([], { NODE_OPTIONS: '--max-old-space-size=256' }).status, 0);
  assert.equal(run([]).status, 0);
  assert.deepEqual(await Promise.all(caches.map(async (n) => (await stat(path.join(path.dirname(cache), n))).mtimeMs)), times);
});
