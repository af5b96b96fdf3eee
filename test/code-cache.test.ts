import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT, tempDataDir } from './helpers/data-dir.ts';
import { cliEnv } from './helpers/cli.ts';

// bin/estate compiles the bundle with a V8 code cache kept in the user's
// cache folder ($XDG_CACHE_HOME/estate/code-<tag>.cache), one per bundle path
// and set of node flags, its header naming the build that wrote it; never in
// the installed package. It is written when it is missing or rejected, by a
// command that starts, works and ends, never by one that ran until stopped
// (serve, --follow, --watch): that run compiled the server, not what the next
// start needs. Each test works on its own copies of the built CLI and its own
// cache folder, so the project's caches are left alone.

async function tempFolder(t: test.TestContext, name: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `estate-${name}-`));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A copy of the built CLI (bin/, dist/estate.cjs, package.json) in a folder of its own. */
async function cliCopy(t: test.TestContext): Promise<{ root: string; bin: string }> {
  const root = await tempFolder(t, 'code-cache-cli');
  await mkdir(path.join(root, 'bin'));
  await mkdir(path.join(root, 'dist'));
  for (const file of ['bin/estate', 'bin/package.json', 'dist/estate.cjs', 'package.json']) await copyFile(path.join(ROOT, file), path.join(root, file));
  return { root, bin: path.join(root, 'bin', 'estate') };
}

/** The code caches in `cacheHome` (XDG_CACHE_HOME), sorted. */
async function caches(cacheHome: string): Promise<string[]> {
  const folder = path.join(cacheHome, 'estate');
  if (!existsSync(folder)) return [];
  return (await readdir(folder)).filter((n) => n.startsWith('code-')).sort().map((n) => path.join(folder, n));
}

/** What identifies a file's version: a rewrite (a rename over it) makes another inode. */
async function version(file: string): Promise<string> {
  const s = await stat(file);
  return `${s.ino}:${s.mtimeMs}`;
}

/** Every file under `dir` (names and sizes). */
async function listing(dir: string): Promise<string[]> {
  const names = (await readdir(dir, { recursive: true })).sort();
  return Promise.all(names.map(async (n) => `${n} ${(await stat(path.join(dir, n))).size}`));
}

test('a served run leaves the code cache unwritten; the next short command writes it, in the cache folder and not beside the bundle', async (t) => {
  const { root, bin } = await cliCopy(t);
  const cacheHome = await tempFolder(t, 'code-cache-home');
  const dir = await tempDataDir(t);
  const env = cliEnv({ XDG_CACHE_HOME: cacheHome });
  const installed = await listing(root);
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
  assert.deepEqual(await caches(cacheHome), [], 'serve wrote a code cache');

  const run = spawnSync(process.execPath, [bin, 'trends', '--limit', '1', '--json', '--data-dir', dir], { encoding: 'utf8', env });
  assert.equal(run.status, 0, run.stderr);
  const [cache, ...more] = await caches(cacheHome);
  assert.ok(cache && more.length === 0, 'one code cache');
  const s = await stat(cache);
  assert.ok(s.size > 100_000, `a short command writes the code cache (${s.size} bytes)`);
  assert.equal(s.mode & 0o777, 0o600);
  assert.equal((await stat(path.dirname(cache))).mode & 0o777, 0o700);
  assert.deepEqual(await listing(root), installed, 'nothing written beside the CLI');
});

test('a run with node flags of its own keeps its code cache apart: runs with and without them do not rewrite each other\'s', async (t) => {
  const { bin } = await cliCopy(t);
  const cacheHome = await tempFolder(t, 'code-cache-home');
  const dir = await tempDataDir(t);
  const run = (flags: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [...flags, bin, 'trends', '--limit', '1', '--json', '--data-dir', dir], { encoding: 'utf8', env: cliEnv({ XDG_CACHE_HOME: cacheHome, ...env }) });
  assert.equal(run([]).status, 0);
  const [plain] = await caches(cacheHome);
  assert.ok(plain);
  const plainVersion = await version(plain);
  assert.equal(run([]).status, 0);
  assert.equal(await version(plain), plainVersion, 'an accepted cache is left as it is');

  const flagged = run(['--max-old-space-size=512']);
  assert.equal(flagged.status, 0, flagged.stderr);
  assert.deepEqual(JSON.parse(flagged.stdout).items, []);
  const viaEnv = run([], { NODE_OPTIONS: '--max-old-space-size=256' });
  assert.equal(viaEnv.status, 0, viaEnv.stderr);
  assert.equal(await version(plain), plainVersion, 'the flagless cache is untouched');
  const all = await caches(cacheHome);
  assert.equal(all.length, 3, all.join(', '));
  assert.ok(all.every((f) => /^code-[0-9a-f]{8}\.cache$/.test(path.basename(f))), all.join(', '));
  // Each is taken again by its own kind of run: none is rewritten.
  const versions = await Promise.all(all.map(version));
  assert.equal(run(['--max-old-space-size=512']).status, 0);
  assert.equal(run([], { NODE_OPTIONS: '--max-old-space-size=256' }).status, 0);
  assert.equal(run([]).status, 0);
  assert.deepEqual(await Promise.all(all.map(version)), versions);
});

test('two installs keep a code cache each, and a cache another build wrote at the same path is not taken', async (t) => {
  const a = await cliCopy(t);
  const b = await cliCopy(t);
  const cacheHome = await tempFolder(t, 'code-cache-home');
  const dir = await tempDataDir(t);
  const run = (bin: string) => spawnSync(process.execPath, [bin, 'trends', '--limit', '1', '--json', '--data-dir', dir], { encoding: 'utf8', env: cliEnv({ XDG_CACHE_HOME: cacheHome }) });
  assert.equal(run(a.bin).status, 0);
  const [cacheA] = await caches(cacheHome);
  assert.ok(cacheA);
  const versionA = await version(cacheA);
  assert.equal(run(b.bin).status, 0);
  assert.equal((await caches(cacheHome)).length, 2, 'the second install wrote a cache of its own');
  assert.equal(run(a.bin).status, 0);
  assert.equal(await version(cacheA), versionA, 'and left the first one alone');

  // Another build in a's place: its first line names another build, the length is the same (all V8 checks).
  const bundle = path.join(a.root, 'dist', 'estate.cjs');
  const text = await readFile(bundle, 'latin1');
  const id = /^\/\/ estate build ([\w-]+)\n/.exec(text)?.[1];
  assert.ok(id, 'the bundle names its build on its first line');
  await writeFile(bundle, text.replace(id, id.replace(/[0-9a-f]/, (c) => (c === '0' ? '1' : '0'))), 'latin1');
  const rebuilt = run(a.bin);
  assert.equal(rebuilt.status, 0, rebuilt.stderr);
  assert.notEqual(await version(cacheA), versionA, 'the old build\'s cache is replaced, not taken');
  const newVersion = await version(cacheA);
  assert.equal(run(a.bin).status, 0);
  assert.equal(await version(cacheA), newVersion, 'the new one is taken');
});

test('a code cache others may write is not taken, and is replaced', async (t) => {
  const { bin } = await cliCopy(t);
  const cacheHome = await tempFolder(t, 'code-cache-home');
  const dir = await tempDataDir(t);
  const run = () => spawnSync(process.execPath, [bin, 'trends', '--limit', '1', '--json', '--data-dir', dir], { encoding: 'utf8', env: cliEnv({ XDG_CACHE_HOME: cacheHome }) });
  assert.equal(run().status, 0);
  const [cache] = await caches(cacheHome);
  assert.ok(cache);
  await chmod(cache, 0o666);
  const before = await version(cache);
  assert.equal(run().status, 0);
  assert.notEqual(await version(cache), before);
  assert.equal((await stat(cache)).mode & 0o777, 0o600);
});

test('a cache folder that cannot be made or written never stops a command', async (t) => {
  const { bin } = await cliCopy(t);
  const scratch = await tempFolder(t, 'code-cache-home');
  const dir = await tempDataDir(t, path.join(ROOT, 'fixtures', 'demo-estate'));
  const aFile = path.join(scratch, 'a-file');
  await writeFile(aFile, '');
  // A file where the folder should be; /proc, where mkdir answers ENOENT under a folder
  // that exists (node's recursive mkdir loops for ever there); no HOME and no XDG_CACHE_HOME.
  const homes: Record<string, string>[] = [{ XDG_CACHE_HOME: aFile }, { XDG_CACHE_HOME: path.join(aFile, 'below') }, { XDG_CACHE_HOME: '', HOME: '' }];
  if (existsSync('/proc/self')) homes.push({ XDG_CACHE_HOME: '/proc/estate-no-such-folder' });
  for (const env of homes) {
    const run = spawnSync(process.execPath, [bin, 'trends', '--limit', '2', '--json', '--data-dir', dir], { encoding: 'utf8', env: cliEnv(env), timeout: 30_000, killSignal: 'SIGKILL' });
    assert.equal(run.status, 0, `${JSON.stringify(env)}: ${run.stderr}${run.signal ?? ''}`);
    assert.equal(JSON.parse(run.stdout).items.length, 2, JSON.stringify(env));
    assert.equal(run.stderr, '', JSON.stringify(env));
  }
});
