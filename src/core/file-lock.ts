import { open, readFile, stat, unlink } from 'node:fs/promises';
import { EstateError } from '../errors.ts';

const RETRY_MS = 5;
const STALE_MS = 30_000;

/**
 * Runs `fn` while holding an inter-process lock: a lock file created with
 * O_EXCL that holds the owner's pid. A lock whose owner is gone (or that is
 * older than 30 s) is broken. Gives up with an `io` error after `timeoutMs`.
 */
export async function withFileLock<T>(lockFile: string, fn: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const handle = await open(lockFile, 'wx', 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (await isStale(lockFile)) {
        await unlink(lockFile).catch(() => {});
        continue;
      }
      if (Date.now() > deadline) throw new EstateError('io', `timed out waiting for lock ${lockFile}`);
      await new Promise((r) => setTimeout(r, RETRY_MS + Math.random() * RETRY_MS));
    }
  }
  try {
    return await fn();
  } finally {
    await unlink(lockFile).catch(() => {});
  }
}

async function isStale(lockFile: string): Promise<boolean> {
  try {
    const [text, info] = await Promise.all([readFile(lockFile, 'utf8'), stat(lockFile)]);
    const pid = Number(text);
    if (Number.isInteger(pid) && pid > 0 && !isAlive(pid)) return true;
    return Date.now() - info.mtimeMs > STALE_MS;
  } catch {
    return false;
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
