import { randomBytes } from 'node:crypto';
import { constants, lstatSync, type Stats } from 'node:fs';
import { type FileHandle, link, lstat, open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { EstateError } from '../errors.ts';
import { type LockOwner, newLockOwner, ownerProcess, parseLockOwner } from './lock-owner.ts';
import { observeLockWait, observing } from './observe.ts';

const RETRY_MS = 5;
/** At most this much of a lock file is read: an owner line is far shorter. */
const MAX_OWNER_BYTES = 1024;
/** Lock files are read without following a link in their place: a planted link is judged as a file of no known owner. */
const READ_NOFOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW;

export interface FileLockOptions {
  /** Give up with an `unavailable` error (503, `Retry-After`) after this long. Default 10 s. */
  timeoutMs?: number;
  /** A lock file seen unchanged for this long, by the waiter's own clock, is stale. Default 5 s. */
  staleMs?: number;
  /** How often the holder touches its lock file. Default 1 s; keep it well under `staleMs`. */
  heartbeatMs?: number;
}

export interface HeldLock {
  /** Aborted once the holder finds its lock was broken (it was paused or hung past the stale time). */
  readonly signal: AbortSignal;
  /** Throws an `unavailable` error unless the lock file is still this holder's: call it right before the write the lock guards. */
  check(): Promise<void>;
  /** `check`, synchronous: for a last look that nothing else in this process may come between with the write (writeFileAtomic's `beforeReplace`). */
  checkSync(): void;
}

/**
 * Runs `fn` while holding an inter-process lock: a lock file created with
 * O_EXCL holding one JSON line naming its owner (host, boot id, PID
 * namespace, pid, process start time, random token; see lock-owner.ts),
 * kept open and touched every `heartbeatMs` while held.
 *
 * Whose pid can be judged here (taken in this host, boot and PID namespace)
 * is judged by its process alone: gone (its pid dead, or reused by a process
 * started at another time) frees the lock at once; running keeps it, however
 * slow the holder is. Any other lock (another container or host, an older
 * estate's line, a bare pid) is stale once its file has not changed (inode,
 * mtime, ctime, size) for `staleMs` measured by the waiter's monotonic
 * clock: no foreign clock or pid is ever trusted, so such a lock, or one
 * with an mtime in the future, is judged only by its heartbeat.
 *
 * Breaking is serialised (the breaker takes `<lock>.break` with O_EXCL) and
 * checked: the breaker looks at the lock file again, moves it aside only if
 * it is still the file it saw stale (same inode, mtime, size and token), and
 * removes it only if the file moved is that one, else puts it back. A holder
 * releases only its own file (the same inode, which its open handle pins). A
 * holder that finds its lock broken aborts `lock.signal`, and `lock.check()`
 * throws: call it right before the write it guards (`checkSync` in
 * writeFileAtomic's `beforeReplace`, right before the rename).
 */
export async function withFileLock<T>(lockFile: string, fn: (lock: HeldLock) => Promise<T>, options: FileLockOptions = {}): Promise<T> {
  const { timeoutMs = 10_000, staleMs = 5_000, heartbeatMs = 1_000 } = options;
  const deadline = performance.now() + timeoutMs;
  const waiting = observing('lockWait');
  const owner = newLockOwner();
  let handle: FileHandle | undefined;
  while (!(handle = await tryCreate(lockFile, owner))) {
    if (performance.now() > deadline) throw lockTimeout(lockFile, timeoutMs);
    const stale = await staleLock(lockFile, staleMs);
    if (stale) await breakStale(lockFile, stale, staleMs);
    else await sleep(RETRY_MS + Math.random() * RETRY_MS);
  }
  sightings.delete(lockFile);
  observeLockWait(waiting, lockFile);
  const held = await holdLock(lockFile, handle, heartbeatMs);
  try {
    return await fn(held.lock);
  } finally {
    await held.release();
  }
}

/** The errors lockTimeout made. */
const timeouts = new WeakSet<object>();

/** Whether `err` is a wait for a lock that ran out (withFileLock's timeoutMs): the lock is busy, nothing else went wrong. */
export function isLockTimeout(err: unknown): boolean {
  return typeof err === 'object' && err !== null && timeouts.has(err);
}

/** Another writer kept the lock past the waiter's patience: busy, not broken. Names the lock file, never its folder. */
function lockTimeout(lockFile: string, timeoutMs: number): EstateError {
  const waited = timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`;
  const err = new EstateError(
    'unavailable',
    `another writer has held the lock ${path.basename(lockFile)} in the data dir for over ${waited}: nothing was written; retry shortly`,
    { headers: { 'Retry-After': '1' } },
  );
  timeouts.add(err);
  return err;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function isCode(err: unknown, code: string): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === code;
}

/** Creates `file` with O_EXCL holding `owner`'s line and returns it open; undefined when it exists. */
async function tryCreate(file: string, owner: LockOwner): Promise<FileHandle | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(file, 'wx', 0o600);
  } catch (err) {
    if (isCode(err, 'EEXIST')) return undefined;
    throw err;
  }
  try {
    await handle.writeFile(`${JSON.stringify(owner)}\n`);
    return handle;
  } catch (err) {
    // A lock that cannot name its owner (a full disk) is removed, or it would block every writer until it went stale.
    await handle.close().catch(() => {});
    await unlink(file).catch(() => {});
    throw err;
  }
}

// ------------------------------------------------------------ holding

async function holdLock(lockFile: string, handle: FileHandle, heartbeatMs: number): Promise<{ lock: HeldLock; release: () => Promise<void> }> {
  const mine = await handle.stat().catch(async (err: unknown) => {
    await handle.close().catch(() => {});
    await unlink(lockFile).catch(() => {});
    throw err;
  });
  const lost = new AbortController();
  const isMine = (info: Stats | undefined) => info !== undefined && info.ino === mine.ino && info.dev === mine.dev;
  const judge = (info: Stats | undefined) => {
    if (!lost.signal.aborted && !isMine(info)) {
      lost.abort(new EstateError('unavailable', 'this writer lost its inter-process lock (it was paused or hung past the stale time and another writer took over); nothing was written, retry'));
    }
  };
  const verify = async () => judge(await lstat(lockFile).catch(() => undefined));
  let lastTouch = mine.mtimeMs;
  const beat = setInterval(() => {
    // The handle's own inode is touched, never a successor's file; then the path is checked.
    const at = Math.max(Date.now(), lastTouch + 1);
    lastTouch = at;
    void handle
      .utimes(at / 1000, at / 1000)
      .then(verify)
      .catch(() => {});
  }, heartbeatMs);
  beat.unref();
  const lock: HeldLock = {
    signal: lost.signal,
    async check() {
      await verify();
      if (lost.signal.aborted) throw lost.signal.reason;
    },
    checkSync() {
      let info: Stats | undefined;
      try {
        info = lstatSync(lockFile);
      } catch {
        info = undefined;
      }
      judge(info);
      if (lost.signal.aborted) throw lost.signal.reason;
    },
  };
  const release = async () => {
    clearInterval(beat);
    try {
      if (!lost.signal.aborted && isMine(await lstat(lockFile).catch(() => undefined))) {
        // A lock that cannot be removed (a read-only volume) is left to go stale, as a crashed holder's would.
        await removeIf(lockFile, isMine).catch(() => {});
      }
    } finally {
      await handle.close().catch(() => {});
    }
  };
  return { lock, release };
}

/**
 * Removes `file` if, moved aside atomically, it passes `same`; else puts it
 * back. When a new file took its place meanwhile, the one moved aside is
 * dropped: its holder finds out at its next check.
 */
async function removeIf(file: string, same: (info: Stats, text: () => Promise<string>) => boolean | Promise<boolean>): Promise<void> {
  const aside = `${file}.${randomBytes(6).toString('hex')}.aside`;
  try {
    await rename(file, aside);
  } catch (err) {
    if (isCode(err, 'ENOENT')) return;
    throw err;
  }
  const matches = await lstat(aside)
    .then((info) => same(info, () => readHead(aside)))
    .catch(() => false);
  if (!matches) {
    try {
      await link(aside, file);
    } catch (err) {
      if (!isCode(err, 'EEXIST')) await rename(aside, file).catch(() => {});
    }
  }
  await unlink(aside).catch(() => {});
}

async function readHead(file: string): Promise<string> {
  const handle = await open(file, READ_NOFOLLOW);
  try {
    return await readOwnerLine(handle);
  } finally {
    await handle.close();
  }
}

async function readOwnerLine(handle: FileHandle): Promise<string> {
  const buffer = Buffer.alloc(MAX_OWNER_BYTES);
  const { bytesRead } = await handle.read(buffer, 0, MAX_OWNER_BYTES, 0);
  return buffer.subarray(0, bytesRead).toString('utf8');
}

// ------------------------------------------------------------ breaking

/** A lock file as seen stale: what must still match for it to be removed. */
interface StaleLock {
  ino: number;
  dev: number;
  mtimeMs: number;
  size: number;
  token: string | undefined;
}

/** Per lock file, the last state a waiter of this process saw and since when (monotonic ms). */
const sightings = new Map<string, { state: string; since: number }>();

/**
 * The lock file as it is when stale, else undefined: its owner's process is
 * gone (ownerProcess), or it is not known to run and the file has not
 * changed for `staleMs` as we watched it. A holder known to run here is never
 * stale, however long it holds the lock: it may be slow, and a lock broken
 * under a live holder is two writers at once.
 */
async function staleLock(lockFile: string, staleMs: number): Promise<StaleLock | undefined> {
  const seen = await inspect(lockFile);
  if (!seen) {
    sightings.delete(lockFile);
    return undefined;
  }
  const holder = seen.owner ? ownerProcess(seen.owner) : 'unknown';
  if (holder === 'running') return undefined;
  const now = performance.now();
  let sighting = sightings.get(lockFile);
  if (sighting?.state !== seen.state) sightings.set(lockFile, (sighting = { state: seen.state, since: now }));
  return holder === 'gone' || now - sighting.since >= staleMs ? seen.lock : undefined;
}

/** The lock file in place now, read without following a link (a planted link is a file of no known owner); undefined when there is none. */
async function inspect(lockFile: string): Promise<{ lock: StaleLock; owner: LockOwner | undefined; state: string } | undefined> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(lockFile, READ_NOFOLLOW);
  } catch (err) {
    if (!isCode(err, 'ELOOP')) return undefined;
  }
  try {
    const info = handle ? await handle.stat() : await lstat(lockFile);
    const owner = handle ? parseLockOwner(await readOwnerLine(handle)) : undefined;
    return {
      lock: { ino: info.ino, dev: info.dev, mtimeMs: info.mtimeMs, size: info.size, token: owner?.token },
      owner,
      state: `${info.dev}:${info.ino}:${info.mtimeMs}:${info.ctimeMs}:${info.size}`,
    };
  } catch {
    return undefined;
  } finally {
    await handle?.close().catch(() => {});
  }
}

/**
 * Removes `lockFile` if it is still the stale file seen; one breaker at a
 * time. The file in place is looked at again (removeIfStill) before it is
 * moved: an owner found gone may have released its lock a moment before it
 * exited, and the file there now, maybe on the same inode, is a live
 * successor's (another token), which must never leave its place, not even
 * for the instant of a move (a third writer could take the lock then).
 */
async function breakStale(lockFile: string, seen: StaleLock, staleMs: number): Promise<void> {
  const breakFile = `${lockFile}.break`;
  const breaker = await tryCreate(breakFile, newLockOwner());
  if (!breaker) {
    // Another waiter is breaking it; a breaker that died mid-break is broken the same way.
    const staleBreaker = await staleLock(breakFile, staleMs);
    if (staleBreaker) await removeIfStill(breakFile, staleBreaker);
    await sleep(RETRY_MS);
    return;
  }
  try {
    await removeIfStill(lockFile, seen);
  } finally {
    const mine = await breaker.stat().catch(() => undefined);
    if (mine) await removeIf(breakFile, (info) => info.ino === mine.ino && info.dev === mine.dev).catch(() => {});
    await breaker.close().catch(() => {});
  }
}

/** Removes `file` if the file in place, looked at again, is still the one `seen` stale: never moves another, even for an instant. */
async function removeIfStill(file: string, seen: StaleLock): Promise<void> {
  const now = await inspect(file);
  if (!now || now.lock.ino !== seen.ino || now.lock.dev !== seen.dev || now.lock.mtimeMs !== seen.mtimeMs || now.lock.size !== seen.size || now.lock.token !== seen.token) return;
  await removeIf(file, isStill(seen)).catch(() => {});
}

function isStill(seen: StaleLock): (info: Stats, text: () => Promise<string>) => Promise<boolean> {
  return async (info, text) => {
    if (info.ino !== seen.ino || info.dev !== seen.dev || info.mtimeMs !== seen.mtimeMs || info.size !== seen.size) return false;
    return parseLockOwner(await text())?.token === seen.token;
  };
}
