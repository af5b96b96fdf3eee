import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, lstat, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT } from './helpers/data-dir.ts';
import { skipWithout } from './helpers/required-tool.ts';
import { waitUntil } from './helpers/wait-until.ts';

const HAS_MAN = spawnSync('man', ['--version'], { stdio: 'ignore' }).status === 0;

// The npm package as a user gets it: `npm pack` (its prepack build and
// manifest, in a copy of the checkout, so that the build does not swap dist/
// under the test files running beside this one), then a global install of the
// tarball into an empty prefix with no network, then the installed `estate`
// and its man page; and a production install (`npm ci --omit=dev`) of a checkout.

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of every child here: no npm_* variables of an enclosing `npm test`, a temp HOME and npm cache. */
function childEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k)) env[k] = v;
  return {
    ...env,
    PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
    HOME: home,
    NO_COLOR: '1',
    npm_config_cache: path.join(home, 'npm-cache'),
    npm_config_update_notifier: 'false',
  };
}

function run(cmd: string, args: readonly string[], options: { cwd?: string; env: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Every file and folder under `dir`, with sizes and modes: what a run may not change in an installed package. */
async function listing(dir: string): Promise<string[]> {
  const names = (await readdir(dir, { recursive: true })).sort();
  return Promise.all(names.map(async (n) => {
    const s = await lstat(path.join(dir, n));
    return `${n} ${s.size} ${s.mode.toString(8)} ${s.mtimeMs}`;
  }));
}

/** A copy of the checkout's sources and build inputs, with the project's node_modules: where `npm pack` may build. */
async function checkoutCopy(into: string): Promise<string> {
  await mkdir(path.join(into, 'fixtures'), { recursive: true });
  for (const f of ['package.json', 'package-lock.json', 'tsconfig.json', 'README.md', 'LICENSE', 'scripts', 'src', 'bin', 'man', 'fixtures/demo-estate']) {
    await cp(path.join(ROOT, f), path.join(into, f), { recursive: true });
  }
  await symlink(path.join(ROOT, 'node_modules'), path.join(into, 'node_modules'));
  return into;
}

/** The total size of the files under `dir` (symlinks not followed). */
async function treeSize(dir: string): Promise<number> {
  let size = 0;
  for (const f of await readdir(dir, { recursive: true })) {
    const s = await lstat(path.join(dir, f));
    if (!s.isDirectory()) size += s.size;
  }
  return size;
}

test('npm ci --omit=dev on the manifest, lock file and scripts installs nothing and builds nothing, offline with an empty cache', async (t) => {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'estate-ci-'));
  t.after(() => rm(tmp, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));
  const home = path.join(tmp, 'home');
  const project = path.join(tmp, 'project');
  await mkdir(home);
  await mkdir(project);
  for (const f of ['package.json', 'package-lock.json', 'scripts']) await cp(path.join(ROOT, f), path.join(project, f), { recursive: true });
  // --offline with an empty cache: nothing may come from a network.
  const ci = await run('npm', ['ci', '--omit=dev', '--offline', '--no-audit', '--no-fund'], { cwd: project, env: childEnv(home), timeoutMs: 60_000 });
  assert.equal(ci.code, 0, `${ci.stdout}\n${ci.stderr}`);
  assert.deepEqual((await readdir(project)).sort(), ['package-lock.json', 'package.json', 'scripts'], 'no node_modules, no dist/');
  assert.match(ci.stderr, /estate: dev dependencies are not installed, so dist\/ is not built/);
});

test('the npm package installs offline into an empty prefix and runs: CLI, init, demo server, docs, man page', async (t) => {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'estate-pack-'));
  t.after(() => rm(tmp, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));
  const home = path.join(tmp, 'home');
  const prefix = path.join(tmp, 'prefix');
  await mkdir(home);
  await mkdir(prefix);
  const cacheHome = path.join(tmp, 'cache');
  const env = { ...childEnv(home), XDG_CACHE_HOME: cacheHome };
  const checkout = await checkoutCopy(path.join(tmp, 'checkout'));
  const manifestText = await readFile(path.join(checkout, 'package.json'), 'utf8');

  const pack = await run('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: checkout, env, timeoutMs: 180_000 });
  assert.equal(pack.code, 0, pack.stderr);
  // npm prints the prepack build's output before its JSON.
  const [packed] = JSON.parse(pack.stdout.slice(pack.stdout.search(/^\[/m))) as { filename: string; files: { path: string }[] }[];
  assert.ok(packed);
  const shipped = packed.files.map((f) => f.path).sort();

  await t.test('npm pack leaves the checkout\'s package.json as it was, also when the pack fails after prepack', async () => {
    assert.equal(await readFile(path.join(checkout, 'package.json'), 'utf8'), manifestText);
    assert.equal(existsSync(path.join(checkout, '.package.json.packing')), false);
    // The tarball cannot be written there: npm stops after prepack and runs no postpack.
    const failed = await run('npm', ['pack', '--pack-destination', path.join(tmp, 'no-such-folder')], { cwd: checkout, env, timeoutMs: 180_000 });
    assert.notEqual(failed.code, 0);
    await waitUntil('package.json is back', async () => (await readFile(path.join(checkout, 'package.json'), 'utf8')) === manifestText, 20_000);
    assert.equal(existsSync(path.join(checkout, '.package.json.packing')), false);
  });

  await t.test('the tarball ships what runs and nothing else', () => {
    for (const must of ['LICENSE', 'README.md', 'package.json', 'bin/estate', 'dist/estate.cjs', 'dist/THIRD-PARTY-LICENSES.txt', 'man/estate.1', 'fixtures/demo-estate/estate.config.json']) {
      assert.ok(shipped.includes(must), `ships ${must}`);
    }
    for (const asset of ['swagger-ui-dist/swagger-ui-bundle.js', 'swagger-ui-dist/LICENSE', 'swagger-ui-dist/NOTICE', 'redoc/bundles/redoc.standalone.js', 'redoc/LICENSE']) {
      assert.ok(shipped.includes(`dist/docs-assets/${asset}`), `ships the docs asset ${asset}`);
    }
    const extra = shipped.filter((f) => /^(src|test|bench|scripts|docs|node_modules)\/|\.(map|cache|ts)$|^fixtures\/(?!demo-estate\/)/.test(f));
    assert.deepEqual(extra, [], 'no sources, tests, bench, build scripts, source maps or code caches');
  });

  const install = await run('npm', ['install', '--global', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', path.join(tmp, packed.filename)], { env });
  assert.equal(install.code, 0, `${install.stdout}\n${install.stderr}`);
  const pkgDir = path.join(prefix, 'lib', 'node_modules', 'estate');
  const estate = path.join(prefix, 'bin', 'estate');
  const installed = await listing(pkgDir);

  await t.test('the packed package.json has no script naming a file the package does not ship, and npm installs it without a warning', async () => {
    const manifest = JSON.parse(await readFile(path.join(pkgDir, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare', 'prepack', 'postpack']) assert.equal(manifest.scripts?.[hook], undefined, hook);
    for (const [name, script] of Object.entries(manifest.scripts ?? {})) {
      // A word naming a file or folder of the checkout must name one the package ships.
      for (const word of script.split(/\s+/).map((w) => w.replace(/^\.\//, ''))) {
        if (!word || !existsSync(path.join(checkout, word))) continue;
        assert.ok(shipped.some((f) => f === word || f.startsWith(`${word}/`)), `script ${name} names ${word}, which is not shipped`);
      }
    }
    // Nothing is lost for a checkout: every other field is the checkout's.
    const { scripts: _packed, ...rest } = manifest;
    const { scripts: _checkout, ...checkoutRest } = JSON.parse(manifestText) as Record<string, unknown>;
    assert.deepEqual(rest, checkoutRest);
    assert.doesNotMatch(install.stderr, /npm warn/i, install.stderr);
  });

  await t.test('no dependency packages and under 10 MB installed', async () => {
    const manifest = JSON.parse(await readFile(path.join(pkgDir, 'package.json'), 'utf8'));
    assert.deepEqual(Object.keys(manifest.dependencies ?? {}), []);
    await assert.rejects(stat(path.join(pkgDir, 'node_modules')), { code: 'ENOENT' });
    const size = await treeSize(pkgDir);
    assert.ok(size < 10 * 1024 * 1024, `installed size ${size} bytes`);
  });

  await t.test('estate --help, --version and init', async () => {
    const help = await run(estate, ['--help'], { env });
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^Usage: estate /);
    const version = await run(estate, ['--version'], { env });
    assert.equal(version.code, 0, version.stderr);
    assert.equal(version.stdout, `${JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')).version}\n`);
    const dataDir = path.join(tmp, 'data');
    const init = await run(estate, ['init', dataDir], { env });
    assert.equal(init.code, 0, init.stderr);
    assert.ok((await stat(path.join(dataDir, 'state'))).isDirectory());
  });

  await t.test('the man page is installed where man looks: man -w finds it, man renders it', async (st) => {
    const manDir = path.join(prefix, 'share', 'man');
    const page = await readFile(path.join(manDir, 'man1', 'estate.1'), 'utf8');
    assert.match(page, /^\.TH ESTATE 1/m);
    if (skipWithout(st, !HAS_MAN && 'man is not installed (apt-get install man-db)')) return;
    const manEnv = { ...env, MANPATH: manDir, MANPAGER: 'cat', PAGER: 'cat', MANWIDTH: '80', LANG: 'C.UTF-8' };
    const where = await run('man', ['-w', 'estate'], { env: manEnv, timeoutMs: 20_000 });
    assert.equal(where.code, 0, where.stderr);
    // npm links share/man/man1/estate.1 to the package's man/estate.1; man names the link's target.
    assert.equal(await realpath(where.stdout.trim()), await realpath(path.join(manDir, 'man1', 'estate.1')));
    const shown = await run('man', ['estate'], { env: manEnv, timeoutMs: 20_000 });
    assert.equal(shown.code, 0, shown.stderr);
    const text = shown.stdout.replace(/.\x08/g, '');
    assert.match(text, /^ESTATE\(1\)/);
    assert.match(text, /^EXIT STATUS$/m);
  });

  await t.test('estate serve --demo answers, docs pages and their assets included', async (st) => {
    const child = spawn(estate, ['serve', '--demo', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    st.after(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const deadline = Date.now() + 20_000;
    let url: string | undefined;
    while (!(url = /at (http:\/\/\S+)/.exec(stdout)?.[1])) {
      if (child.exitCode !== null || Date.now() > deadline) assert.fail(`no URL from estate serve --demo; stdout: ${stdout}; stderr: ${stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const get = (p: string) => fetch(new URL(p, url), { signal: AbortSignal.timeout(10_000) });
    assert.equal((await get('/healthz')).status, 200);
    for (const page of ['/api/docs', '/api/redoc']) {
      const res = await get(page);
      assert.equal(res.status, 200, page);
      const assets = [...(await res.text()).matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
      assert.ok(assets.length >= 2, `${page} loads assets`);
      for (const asset of assets) {
        const a = await get(new URL(asset, `${url}${page}`).href);
        assert.equal(a.status, 200, asset);
        assert.ok((await a.arrayBuffer()).byteLength > 0, asset);
      }
    }
    child.kill('SIGTERM');
    assert.equal(await exited, 0, stderr);
  });

  await t.test('the installed CLI wrote nothing into its install folder; its code cache is under XDG_CACHE_HOME', async () => {
    const trends = await run(estate, ['trends', '--limit', '2', '--json', '--data-dir', path.join(pkgDir, 'fixtures', 'demo-estate')], { env });
    assert.equal(trends.code, 0, trends.stderr);
    assert.deepEqual(await listing(pkgDir), installed);
    // The header of a code cache names the bundle it is of (bin/estate); the checkout's prepack build wrote one too.
    const bundle = path.join(await realpath(pkgDir), 'dist', 'estate.cjs');
    const caches = (await readdir(path.join(cacheHome, 'estate'))).filter((n) => /^code-[0-9a-f]{8}\.cache$/.test(n));
    const headers = await Promise.all(caches.map(async (n) => (await readFile(path.join(cacheHome, 'estate', n))).subarray(0, 300).toString('latin1')));
    assert.equal(headers.filter((h) => h.includes(`\0${bundle}\0`)).length, 1, `one code cache of ${bundle}: ${caches.join(', ')}`);
  });

  await t.test('README says the installed size du says', async () => {
    const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
    const said = Number(/\(([\d.]+) MB installed\)/.exec(readme)?.[1]);
    // du -sh: the files' blocks, in MiB, one decimal rounded up.
    const du = spawnSync('du', ['-sk', pkgDir], { encoding: 'utf8' });
    const kib = du.status === 0 ? Number(du.stdout.split(/\s/)[0]) : Math.ceil((await treeSize(pkgDir)) / 1024);
    assert.equal(said, Math.ceil((kib / 1024) * 10) / 10, `README says ${said} MB; du says ${kib} KiB`);
  });

  await t.test('without its bundle, not even --version reports a working estate', async () => {
    const broken = path.join(tmp, 'broken');
    await cp(pkgDir, broken, { recursive: true });
    await rm(path.join(broken, 'dist'), { recursive: true });
    const version = await run(process.execPath, [path.join(broken, 'bin', 'estate'), '--version'], { env });
    assert.equal(version.code, 1);
    assert.equal(version.stdout, '');
    assert.match(version.stderr, /^estate: the CLI is not built/);
  });
});
