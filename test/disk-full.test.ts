import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { initDataDir } from '../src/core/init-data-dir.ts';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { failWrites } from './helpers/fail-writes.ts';
import { completionBody, entryBody, logLines } from './helpers/records.ts';
import { newKey, startServer, type TestServer } from './helpers/server.ts';

// A full disk fails writes with 507 (HTTP) or one clear line and exit 1
// (CLI), keeps everything already written intact and parseable, and leaves
// nothing behind that blocks the writes that follow once there is room.
// Two variants: a real 256 KiB tmpfs when this machine lets us mount one
// (root), and everywhere a simulated ENOSPC at the write call; the second
// always runs, so the promise is tested on every machine.

const PRELOAD = path.join(import.meta.dirname, 'helpers', 'enospc-preload.mjs');

const cliArgs = (dir: string, id: string) => ['work', 'complete', '--task-id', id, '--board', 'ops', '--assignee', 'cron', '--title', `Task ${id}`, '--data-dir', dir];

/** The writes of the API, each refused with 507 and the same detail; nothing is left in their place. */
async function expectFull(server: TestServer, key: string, dir: string): Promise<void> {
  const writes: [string, object][] = [
    ['/work/complete', completionBody('full')],
    ['/publishing/register', entryBody('full')],
    ['/training/start', { name: 'full' }],
  ];
  for (const [route, body] of writes) {
    const r = await server.request('POST', route, { headers: { 'X-API-Key': key }, body });
    assert.equal(r.status, 507, `${route}: ${r.text}`);
    assert.match(r.json.detail, /^no space left to write in the data dir \(ENOSPC\): nothing was stored/);
    assert.ok(!r.text.includes(dir));
  }
  const ready = await server.get('/readyz');
  assert.equal(ready.status, 503);
  assert.equal(ready.json.detail, 'not ready: data_dir_writable failed (ENOSPC)');
  assert.equal((await server.get('/healthz')).status, 200);
}

/** Every line of the log parses, and there are `count` of them. */
async function expectIntact(dir: string, count: number): Promise<void> {
  const lines = await logLines(dir, 'work/completions.jsonl');
  assert.equal(lines.length, count, lines.join('\n'));
  for (const line of lines) assert.equal(typeof JSON.parse(line), 'object');
  assert.ok((await readFile(path.join(dir, 'work/completions.jsonl'), 'utf8')).endsWith('\n'));
  const leftovers = (await readdir(dir, { recursive: true })).filter((f) => /\.(lock|break|tmp)$/.test(f));
  assert.deepEqual(leftovers, [], 'no lock or temp file is left behind');
  assert.deepEqual(await readdir(path.join(dir, 'training', 'runs')), [], 'no half-written run');
}

async function writeSome(server: TestServer, key: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) assert.equal((await server.request('POST', '/work/complete', { headers: { 'X-API-Key': key }, body: completionBody(i) })).status, 201);
}

async function recovers(server: TestServer, key: string, dir: string, count: number): Promise<void> {
  const again = await server.request('POST', '/work/complete', { headers: { 'X-API-Key': key }, body: completionBody('full') });
  assert.equal(again.status, 201, 'the refused write was not stored: sent again, it is new');
  assert.equal((await server.get('/readyz')).status, 200);
  const cli = await runEstate(cliArgs(dir, 'after'));
  assert.equal(cli.code, 0, cli.stderr);
  await expectIntact(dir, count + 2);
}

test('disk full (simulated ENOSPC at the write call): 507, one CLI line with exit 1, nothing lost, writes resume', async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  await writeSome(server, key, 5);
  const restore = await failWrites(t, 'ENOSPC');
  await expectFull(server, key, dir);
  const cli = await runEstate(cliArgs(dir, 'cli-full'), { env: { NODE_OPTIONS: `--import=${PRELOAD}` } });
  assert.equal(cli.code, 1);
  assert.match(cli.stderr, /^estate: no space left to write in the data dir \(ENOSPC\): nothing was stored; free some space and retry\n$/);
  await expectIntact(dir, 5);
  restore();
  await recovers(server, key, dir, 5);
});

/** Mounts a tmpfs of `size` at `dir`; false when this machine does not let us. */
function mountTmpfs(dir: string, size: string): boolean {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return false;
  return spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir], { stdio: 'ignore' }).status === 0;
}

test('disk full (a real 256 KiB tmpfs): 507, one CLI line with exit 1, nothing lost, writes resume', async (t) => {
  const root = await mkdtemp(path.join(os.tmpdir(), 'estate-full-'));
  const mountPoint = path.join(root, 'mnt');
  await mkdir(mountPoint);
  if (!mountTmpfs(mountPoint, '256k')) {
    await rm(root, { recursive: true, force: true });
    t.skip('cannot mount a tmpfs here (needs root on Linux); the simulated variant covers the promise');
    return;
  }
  t.after(async () => {
    spawnSync('umount', ['-l', mountPoint], { stdio: 'ignore' });
    await rm(root, { recursive: true, force: true });
  });
  const dir = path.join(mountPoint, 'data');
  await initDataDir(dir);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  await writeSome(server, key, 5);

  const filler = path.join(mountPoint, 'filler');
  const chunk = Buffer.alloc(4096, 0x78);
  for (let i = 0; i < 1000; i++) {
    try {
      await appendFile(filler, chunk);
    } catch (err) {
      assert.equal((err as NodeJS.ErrnoException).code, 'ENOSPC');
      break;
    }
  }
  await expectFull(server, key, dir);
  const cli = await runEstate(cliArgs(dir, 'cli-full'));
  assert.equal(cli.code, 1);
  assert.match(cli.stderr, /^estate: no space left to write in the data dir \(ENOSPC\): nothing was stored; free some space and retry\n$/);
  await expectIntact(dir, 5);

  await rm(filler);
  assert.ok(!existsSync(filler));
  await recovers(server, key, dir, 5);
});
