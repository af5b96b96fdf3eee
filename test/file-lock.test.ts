import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { readdir, readFile, rename, unlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { withFileLock } from '../src/core/file-lock.ts';
import { type LockOwner, newLockOwner, parseLockOwner } from '../src/core/lock-owner.ts';
import { ROOT, tempDataDir } from './helpers/data-dir.ts';
import { pidNamespacesUnavailable, UNSHARE_PID, unsharedPid } from './helpers/pid-namespace.ts';
import { skipWithout } from './helpers/required-tool.ts';
import { waitUntil } from './helpers/wait-until.ts';

// The inter-process lock of src/core/file-lock.ts, against locks held by
// processes this one cannot see (another PID namespace or host), holders
// here that are slow or paused (never broken while they run), holders gone
// or whose pid was reused, and lock files with an mtime in the future.
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

/** A child that has exited but that its parent (a `sleep`) never reaps: its pid and start time, as its lock line would name them. */
async function exitedUnreaped(t: { after: (fn: () => void) => void }): Promise<{ pid: number; start: string }> {
  const parent = spawn('sh', ['-c', `${JSON.stringify(process.execPath)} -e 'process.stdout.write(String(process.pid))' & exec sleep 60`], { stdio: ['ignore', 'pipe', 'ignore'] });
  t.after(() => parent.kill('SIGKILL'));
  let out = '';
  parent.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  const fields = () => {
    const stat = readFileSync(`/proc/${Number(out)}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  };
  await waitUntil('the child has exited, unreaped', () => out !== '' && fields()[0] === 'Z', 20_000);
  return { pid: Number(out), start: fields()[19] as string };
}

/** An owner as an older estate wrote it, before lines named the process's start time. */
function withoutStart(owner: LockOwner): Omit<LockOwner, 'start'> {
  const { start: _start, ...rest } = owner;
  return rest;
}

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

/** A waiter gives up on `lock` with the usual 503 error, never runs, and leaves the holder's `text` in place. */
async function assertHeldOut(lock: string, text: string): Promise<void> {
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
      await assertHeldOut(lock, text);
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
    // An older estate's line has no start time: a live pid there may be a reused one, so its heartbeat decides.
    { name: 'a live local pid with no start time, mtime an hour ahead', text: () => JSON.stringify({ ...withoutStart(newLockOwner()), pid: live.pid }), mtime: HOUR_AHEAD },
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

test('a local lock with an mtime in the future is broken as soon as its holder is gone', { timeout: 30_000, skip: process.platform !== 'linux' && 'reads /proc' }, async (t) => {
  const live = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  t.after(() => live.kill('SIGKILL'));
  const zombie = await exitedUnreaped(t);
  const cases = [
    { name: 'its pid is dead', owner: () => ({ ...newLockOwner(), pid: deadPid() }) },
    // This process's start time with another process's pid: that pid now names a process the lock's owner was not.
    { name: 'its pid now names a process started at another time (a reused pid)', owner: () => ({ ...newLockOwner(), pid: live.pid as number }) },
    { name: 'it exited and its parent has not reaped it yet (a zombie)', owner: () => ({ ...newLockOwner(), ...zombie }) },
  ];
  for (const c of cases) {
    await t.test(c.name, async (t) => {
      const lock = path.join(await tempDataDir(t), 'a.lock');
      await writeFile(lock, JSON.stringify(c.owner()));
      await utimes(lock, HOUR_AHEAD(), HOUR_AHEAD());
      // The stale time is far beyond the timeout: only the check of the owner's process can break it.
      const entered = await withFileLock(lock, async () => true, { staleMs: 600_000, timeoutMs: 10_000 });
      assert.equal(entered, true);
    });
  }
});

test('a lock whose holder runs here is never broken, however long it stays untouched', { timeout: 30_000 }, async (t) => {
  const dir = await tempDataDir(t);
  const lock = path.join(dir, 'a.lock');
  // This very process, as a holder whose heartbeat stopped (slow under load, or paused): alive, with its own start time.
  const text = JSON.stringify(newLockOwner());
  await writeFile(lock, text);
  await utimes(lock, HOUR_AHEAD(), HOUR_AHEAD());
  await assertHeldOut(lock, text);
});

test('a holder whose lock was broken while it hung learns it, and does not remove its successor\'s lock', { timeout: 30_000 }, async (t) => {
  const dir = await tempDataDir(t);
  const lock = path.join(dir, 'a.lock');
  let releaseFirst!: () => void;
  const firstMayEnd = new Promise<void>((r) => (releaseFirst = r));
  const firstChecks: string[] = [];
  const first = withFileLock(lock, async (held) => {
    await firstMayEnd;
    await held.check().then(
      () => firstChecks.push('check passed'),
      (err: Error & { code?: string }) => firstChecks.push(`check failed: ${err.code}`),
    );
    firstChecks.push(held.signal.aborted ? 'aborted' : 'not aborted');
  });
  await waitUntil('the first holder has the lock', async () => (await leftovers(dir)).includes('a.lock'));
  // Broken as a waiter in another container breaks a lock it saw untouched: moved away, and a successor's in its place.
  await rename(lock, `${lock}.broken`);
  await unlink(`${lock}.broken`);
  const successor = foreignOwner();
  await writeFile(lock, successor);
  releaseFirst();
  await first;
  assert.deepEqual(firstChecks, ['check failed: unavailable', 'aborted']);
  assert.equal(await readFile(lock, 'utf8'), successor, 'the successor still holds its lock');
  assert.deepEqual(await leftovers(dir), ['a.lock']);
});

test('a holder stopped with SIGSTOP past the stale time: kept when it runs here, lost when its pid means nothing here', { timeout: 60_000, skip: process.platform === 'win32' && 'no SIGSTOP on Windows' }, async (t) => {
  const cases = [
    { name: 'in this PID namespace: its lock is kept, the waiter gives up, and continued it writes', command: [] as string[], kept: true },
    { name: 'in another PID namespace: its lock is broken, and continued it gives up and leaves its successor\'s alone', command: UNSHARE_PID, kept: false },
  ];
  for (const c of cases) {
    await t.test(c.name, async (t) => {
      if (c.command.length && skipWithout(t, pidNamespacesUnavailable())) return;
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
      const [file, ...args] = [...c.command, process.execPath, '--import', 'tsx', '--input-type=module', '-e', script];
      const child = spawn(file as string, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
      t.after(() => child.kill('SIGKILL'));
      let out = '';
      let err = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
      const exited = new Promise((r) => child.on('close', r));
      await waitUntil(`the child holds the lock (stderr: ${err})`, () => out.includes('held\n'), 20_000);
      const holder = c.command.length ? unsharedPid(child.pid as number) : child.pid;
      assert.ok(holder, 'the holder\'s pid');
      process.kill(holder, 'SIGSTOP');
      const goOn = async () => {
        process.kill(holder, 'SIGCONT');
        child.stdin.write('go\n');
        await waitUntil(`the child lets go (stdout: ${out}, stderr: ${err})`, () => out.includes('released\n'), 20_000);
      };
      if (c.kept) {
        await assert.rejects(
          withFileLock(lock, async () => {}, { staleMs: STALE_MS, timeoutMs: STALE_MS * 6 }),
          (e: Error & { code?: string }) => e.code === 'unavailable' && /^another writer has held the lock a\.lock/.test(e.message),
        );
        await goOn();
        assert.equal(out, 'held\nkept\nreleased\n');
      } else {
        await withFileLock(
          lock,
          async (held) => {
            const mine = await readFile(lock, 'utf8');
            await goOn();
            assert.equal(out, 'held\nlost:unavailable aborted\nreleased\n');
            assert.equal(await readFile(lock, 'utf8'), mine, 'the successor still holds its lock');
            await held.check();
          },
          { staleMs: STALE_MS, timeoutMs: 10_000 },
        );
      }
      await exited;
      assert.deepEqual(await leftovers(dir), []);
    });
  }
});
