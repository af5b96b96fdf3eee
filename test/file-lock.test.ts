import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { withFileLock } from '../src/core/file-lock.ts';
import { newLockOwner, parseLockOwner } from '../src/core/lock-owner.ts';
import { ROOT, tempDataDir } from './helpers/data-dir.ts';
import { waitUntil } from './helpers/wait-until.ts';

// The inter-process lock of src/core/file-lock.ts, against locks held by
// processes this one cannot see (another PID namespace or host), holders
// paused past the stale time, and lock files with an mtime in the future.
// Stale times are short here through the `staleMs` option.

const STALE_MS = 300;

/** A pid that is not running here: a child that has exited. */
function deadPid(): number {
  return Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);
}

/** A lock line as another container's or host's estate writes it. */
function foreignOwner(): string {
  return JSON.stringify({ host: 'other-host', boot: 'other-boot-id', pidns: 'pid:[4026532999]', pid: deadPid(), token: randomBytes(16).toString('hex') });
}

const HOUR_AHEAD = () => new Date(Date.now() + 3_600_000);

/** Keeps `file` fresh the way a live holder elsewhere does; returns the stop function. */
function heartbeat(file: string): () => void {
  const beat = setInterval(() => {
    const now = new Date();
    utimes(file, now, now).catch(() => {});
  }, 30);
  return () => clearInterval(beat);
}

async function leftovers(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name.includes('.lock'));
}

test('an uncontended lock names its owner while held and leaves nothing behind', async (t) => {
  const dir = await tempDataDir(t);
  const lock = path.join(dir, 'a.lock');
  const owner = await withFileLock(lock, async () => parseLockOwner(await readFile(lock, 'utf8')));
  assert.equal(owner?.pid, process.pid);
  assert.match(owner?.token ?? '', /^[0-9a-f]{32}$/);
  assert.equal(typeof owner?.host, 'string');
  assert.deepEqual(await leftovers(dir), []);
});

test('a lock held elsewhere and kept fresh by its heartbeat is never broken, whatever its pid means here', { timeout: 30_000 }, async (t) => {
  const cases = [
    { name: 'another PID namespace or host', text: foreignOwner },
    { name: 'an old-format lock (a bare pid)', text: () => String(deadPid()) },
  ];
  for (const c of cases) {
    await t.test(c.name, async (t) => {
      const lock = path.join(await tempDataDir(t), 'a.lock');
      const text = c.text();
      await writeFile(lock, text);
      const stop = heartbeat(lock);
      t.after(stop);
      let entered = false;
      await assert.rejects(
        withFileLock(
          lock,
          async () => {
            entered = true;
          },
          { staleMs: STALE_MS, timeoutMs: STALE_MS * 6 },
        ),
        (err: Error & { code?: string }) => err.code === 'unavailable' && /^another writer has held the lock a\.lock in the data dir/.test(err.message),
      );
      assert.equal(entered, false);
      assert.equal(await readFile(lock, 'utf8'), text, 'the holder still has its lock');
    });
  }
});

test('a lock nobody touches any more is broken after the stale time, even with an mtime in the future', { timeout: 30_000 }, async (t) => {
  const live = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  t.after(() => live.kill('SIGKILL'));
  const cases = [
    { name: 'another PID namespace or host', text: foreignOwner, mtime: () => new Date() },
    { name: 'another PID namespace or host, mtime an hour ahead', text: foreignOwner, mtime: HOUR_AHEAD },
    { name: 'an old-format lock, mtime an hour ahead', text: () => String(deadPid()), mtime: HOUR_AHEAD },
    // A live pid that no longer touches its lock is a hung holder or a reused pid.
    { name: 'a live local pid, mtime an hour ahead', text: () => JSON.stringify({ ...newLockOwner(), pid: live.pid }), mtime: HOUR_AHEAD },
  ];
  for (const c of cases) {
    await t.test(c.name, async (t) => {
      const dir = await tempDataDir(t);
      const lock = path.join(dir, 'a.lock');
      await writeFile(lock, c.text());
      await utimes(lock, c.mtime(), c.mtime());
      const owner = await withFileLock(lock, async () => parseLockOwner(await readFile(lock, 'utf8')), { staleMs: STALE_MS, timeoutMs: 20_000 });
      assert.equal(owner?.pid, process.pid);
      assert.deepEqual(await leftovers(dir), []);
    });
  }
});

test('a local lock with an mtime in the future is broken as soon as its holder is dead', { timeout: 30_000 }, async (t) => {
  const dir = await tempDataDir(t);
  const lock = path.join(dir, 'a.lock');
  await writeFile(lock, JSON.stringify({ ...newLockOwner(), pid: deadPid() }));
  await utimes(lock, HOUR_AHEAD(), HOUR_AHEAD());
  // The stale time is far beyond the timeout: only the pid check can break it.
  const entered = await withFileLock(lock, async () => true, { staleMs: 600_000, timeoutMs: 10_000 });
  assert.equal(entered, true);
});

test('a holder whose lock was broken while it hung learns it, and does not remove its successor\'s lock', { timeout: 30_000 }, async (t) => {
  const dir = await tempDataDir(t);
  const lock = path.join(dir, 'a.lock');
  let releaseFirst!: () => void;
  const firstMayEnd = new Promise<void>((r) => (releaseFirst = r));
  const firstChecks: string[] = [];
  // The first holder does not beat within the stale time: as if it were paused.
  const first = withFileLock(
    lock,
    async (held) => {
      await firstMayEnd;
      firstChecks.push(held.signal.aborted ? 'aborted' : 'held');
      await held.check().then(
        () => firstChecks.push('check passed'),
        (err: Error & { code?: string }) => firstChecks.push(`check failed: ${err.code}`),
      );
    },
    { staleMs: STALE_MS, heartbeatMs: 600_000 },
  );
  await waitUntil('the first holder has the lock', async () => (await leftovers(dir)).includes('a.lock'));
  await withFileLock(
    lock,
    async (held) => {
      const mine = await readFile(lock, 'utf8');
      releaseFirst();
      await first;
      assert.deepEqual(firstChecks, ['held', 'check failed: unavailable']);
      assert.equal(await readFile(lock, 'utf8'), mine, 'the successor still holds its lock');
      await held.check();
    },
    { staleMs: STALE_MS, timeoutMs: 10_000 },
  );
  assert.deepEqual(await leftovers(dir), []);
});

test('a holder stopped with SIGSTOP past the stale time loses its lock and, continued, leaves its successor\'s alone', { timeout: 30_000, skip: process.platform === 'win32' && 'no SIGSTOP on Windows' }, async (t) => {
  const dir = await tempDataDir(t);
  const lock = path.join(dir, 'a.lock');
  const script = `
    const { withFileLock } = await import(${JSON.stringify(pathToFileURL(path.join(ROOT, 'src', 'core', 'file-lock.ts')).href)});
    await withFileLock(${JSON.stringify(lock)}, async (lock) => {
      process.stdout.write('held\\n');
      await new Promise((r) => process.stdin.once('data', r));
      const verdict = await lock.check().then(() => 'kept', (err) => 'lost:' + err.code);
      process.stdout.write(verdict + (lock.signal.aborted ? ' aborted' : '') + '\\n');
    }, { heartbeatMs: 50 });
    process.stdout.write('released\\n');
    process.exit(0);
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  t.after(() => child.kill('SIGKILL'));
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exited = new Promise((r) => child.on('close', r));
  await waitUntil(`the child holds the lock (stderr: ${err})`, () => out.includes('held\n'), 20_000);
  child.kill('SIGSTOP');
  await withFileLock(
    lock,
    async (held) => {
      const mine = await readFile(lock, 'utf8');
      child.kill('SIGCONT');
      child.stdin.write('go\n');
      await waitUntil(`the child lets go (stdout: ${out}, stderr: ${err})`, () => out.includes('released\n'), 20_000);
      assert.equal(out, 'held\nlost:unavailable aborted\nreleased\n');
      assert.equal(await readFile(lock, 'utf8'), mine, 'the successor still holds its lock');
      await held.check();
    },
    { staleMs: STALE_MS, timeoutMs: 10_000 },
  );
  await exited;
  assert.deepEqual(await leftovers(dir), []);
});
