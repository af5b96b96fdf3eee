import { open, readFile, stat, unlink, utimes } from 'node:fs/promises';
import { EstateError } from '../errors.ts';

const RETRY_MS = 5;
/** A holder touches its lock this often, so a lock untouched for STALE_MS belongs to a dead or hung process. */
const HEARTBEAT_MS = 1_000;
const STALE_MS = 5_000;

/**
 * Runs `fn` while holding an inter-process lock: a lock file created with
 * O_EXCL that holds the owner's pid, touched every second while held.
 *
 * A lock whose owner is gone (its pid is dead, or it was not touched for 5 s)
 * is broken, and breaking is itself serialised: the breaker takes
 * `<lock>.break` (O_EXCL), checks again that the lock file is the same stale
 * one (same inode, still stale), and only then removes it. So two waiters
 * that find the same stale lock can never both end up holding the lock.
 * Gives up with an `io` error after `timeoutMs`.
 */
export async function withFileLock<T>(lockFile: string, fn: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (!(await tryCreate(lockFile))) {
    const stale = await staleInode(lockFile);
    if (stale !== undefined) {
      await breakStale(lockFile, stale);
      continue;
    }
    if (Date.now() > deadline) throw new EstateError('io', `timed out waiting for lock ${lockFile}`);
    await new Promise((r) => setTimeout(r, RETRY_MS + Math.random() * RETRY_MS));
  }
  const heartbeat = setInterval(() => {
    const now = new Date();
    utimes(lockFile, now, now).catch(() => {});
  }, HEARTBEAT_MS);
  heartbeat.unref();
  try {
    return await fn();
  } finally {
    clearInterval(heartbeat);
    await unlink(lockFile).catch(() => {});
  }
}

async function tryCreate(file: string): Promise<boolean> {
  try {
    const handle = await open(file, 'wx', 0o600);
    try {
      await handle.writeFile(String(process.pid));
    } catch (err) {
      // A lock that cannot hold its owner's pid (a full disk) is removed, or it would block every writer until it went stale.
      await handle.close().catch(() => {});
      await unlink(file).catch(() => {});
      throw err;
    }
    await handle.close();
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** Removes `lockFile` if it is still the stale file with inode `ino`; one breaker at a time. */
async function breakStale(lockFile: string, ino: number): Promise<void> {
  const breaker = `${lockFile}.break`;
  if (!(await tryCreate(breaker))) {
    // Another waiter is breaking it; a breaker that died mid-break is cleared once its file is stale.
    if ((await staleInode(breaker)) !== undefined) await unlink(breaker).catch(() => {});
    await new Promise((r) => setTimeout(r, RETRY_MS));
    return;
  }
  try {
    if ((await staleInode(lockFile)) === ino) await unlink(lockFile).catch(() => {});
  } finally {
    await unlink(breaker).catch(() => {});
  }
}

/** The lock file's inode when its owner is dead or it has not been touched for STALE_MS; else undefined. */
async function staleInode(lockFile: string): Promise<number | undefined> {
  try {
    const info = await stat(lockFile);
    if (Date.now() - info.mtimeMs > STALE_MS) return info.ino;
    const pid = Number(await readFile(lockFile, 'utf8'));
    if (Number.isInteger(pid) && pid > 0 && !isAlive(pid)) return info.ino;
    return undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
