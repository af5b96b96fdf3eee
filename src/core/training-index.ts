import { createHash } from 'node:crypto';
import { lstat, mkdir, readdir, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { EstateError } from '../errors.ts';
import { writeFileAtomic } from './atomic-write.ts';
import { dataPath } from './data-files.ts';
import { type FileLockOptions, type HeldLock, withFileLock } from './file-lock.ts';
import { isNotFound } from './fs-errors.ts';
import { assertDataFolder, fileRefusal, openDataFile } from './open-data-file.ts';

// The per-user index of training runs, so that listing a user's runs reads
// only that user's files:
//
// - `training/users/<h>.json`, h = the first 32 hex digits of sha256(user_id):
//   `{"user_id", "run_ids": [...]}`, the ids of every run the user owns
//   (it may also hold ids whose file is gone: readers check every run file);
// - `training/index.json`: `{"version": 1, "runs_mtime_ns", "users_mtime_ns"}`,
//   the modification times of `training/runs/` and `training/users/` right
//   after the last change made under the lock;
// - `training/index.json.lock`: the lock every change to runs or index takes.
//
// A change adds a run to its index before writing its file and removes it
// after unlinking the file, then records both folders' times, all under the
// lock, with atomic writes. So the index is complete whenever the folders still
// have the recorded times. When they do not (a crash mid-change, a run file
// written by another program, an index file deleted), or when index.json or
// the user's file is missing or corrupt, every index is rebuilt from the run
// files, reading only the head of each. Changes to a folder within one tick of
// the file system's clock after a change of ours are not seen: only programs
// that bypass the lock can make such changes.

/** `run_` and 16 lowercase hex digits. */
export const RUN_ID = /^run_[0-9a-f]{16}$/;

const VERSION = 1;
/** The head of a run file that names its owner, as estate writes it (pretty-printed, run_id then user_id). */
const HEAD = /^\{\s*"run_id"\s*:\s*"(run_[0-9a-f]{16})"\s*,\s*"user_id"\s*:\s*("(?:[^"\\\u0000-\u001f]|\\.)*")/;
const HEAD_BYTES = 4096;

interface Manifest {
  version: number;
  runs_mtime_ns: string | null;
  users_mtime_ns: string | null;
}

interface UserIndex {
  user_id: string;
  run_ids: string[];
}

const runsDir = (dataDir: string) => dataPath(dataDir, 'trainingRuns');
const usersDir = (dataDir: string) => dataPath(dataDir, 'trainingUsers');
const manifestFile = (dataDir: string) => dataPath(dataDir, 'trainingIndex');
const lockFile = (dataDir: string) => `${manifestFile(dataDir)}.lock`;

/** Refuses (503) a training folder that is a link leading out of the data dir; see open-data-file.ts. */
async function assertFolders(dataDir: string): Promise<void> {
  await assertDataFolder(runsDir(dataDir));
  await assertDataFolder(usersDir(dataDir));
}

function userFile(dataDir: string, userId: string): string {
  return path.join(usersDir(dataDir), `${createHash('sha256').update(userId, 'utf8').digest('hex').slice(0, 32)}.json`);
}

async function mtimeNs(dir: string): Promise<string | null> {
  try {
    return String((await stat(dir, { bigint: true })).mtimeNs);
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
}

const CORRUPT = Symbol('corrupt');

/** The file's JSON; undefined when it is missing, CORRUPT when it is not a regular file or not JSON. Never follows a symlink. */
async function readJson(file: string): Promise<unknown> {
  let text: string;
  try {
    const handle = await openDataFile(file);
    try {
      if (!(await handle.stat()).isFile()) return CORRUPT;
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (err) {
    if (isNotFound(err)) return undefined;
    if (fileRefusal(err)) return CORRUPT;
    throw err;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return CORRUPT;
  }
}

async function isFresh(dataDir: string): Promise<boolean> {
  const m = (await readJson(manifestFile(dataDir))) as Partial<Manifest> | typeof CORRUPT | null | undefined;
  if (m === undefined || m === null || m === CORRUPT || m.version !== VERSION) return false;
  return m.runs_mtime_ns === (await mtimeNs(runsDir(dataDir))) && m.users_mtime_ns === (await mtimeNs(usersDir(dataDir)));
}

/** The user's run ids from their index file: [] when it is missing, undefined when it is corrupt. */
async function readUserIndex(dataDir: string, userId: string): Promise<string[] | undefined> {
  const json = await readJson(userFile(dataDir, userId));
  if (json === undefined) return [];
  const index = json as Partial<UserIndex> | typeof CORRUPT | null;
  if (index === CORRUPT || index === null || index.user_id !== userId || !Array.isArray(index.run_ids)) return undefined;
  return index.run_ids.filter((id): id is string => typeof id === 'string' && RUN_ID.test(id));
}

/** The owner a run file names, reading only its head when estate wrote it; undefined when it is not a run file. */
async function ownerOf(file: string, runId: string): Promise<string | undefined> {
  let head: string;
  let whole: boolean;
  try {
    const handle = await openDataFile(file);
    try {
      const st = await handle.stat();
      if (!st.isFile()) return undefined;
      const buffer = Buffer.alloc(Math.min(HEAD_BYTES, st.size));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      whole = bytesRead >= st.size;
      head = buffer.subarray(0, bytesRead).toString('utf8');
      const m = HEAD.exec(head);
      if (m && m[1] === runId) return JSON.parse(m[2] as string) as string;
      if (!whole) head = await handle.readFile('utf8').then((rest) => head + rest);
    } finally {
      await handle.close();
    }
  } catch (err) {
    if (isNotFound(err) || fileRefusal(err)) return undefined;
    throw err;
  }
  try {
    const json = JSON.parse(head) as { run_id?: unknown; user_id?: unknown } | null;
    return json?.run_id === runId && typeof json.user_id === 'string' ? json.user_id : undefined;
  } catch {
    return undefined;
  }
}

/** Every run id in training/runs/, by owner, from the run files themselves. */
async function scan(dataDir: string): Promise<Map<string, string[]>> {
  const owners = new Map<string, string[]>();
  let names: string[];
  await assertFolders(dataDir);
  try {
    names = await readdir(runsDir(dataDir));
  } catch (err) {
    if (isNotFound(err)) return owners;
    throw err;
  }
  for (const name of names) {
    const runId = name.slice(0, -'.json'.length);
    if (!name.endsWith('.json') || !RUN_ID.test(runId)) continue;
    const owner = await ownerOf(path.join(runsDir(dataDir), name), runId).catch(() => undefined);
    if (owner !== undefined) owners.set(owner, [...(owners.get(owner) ?? []), runId]);
  }
  return owners;
}

async function writeUserIndex(dataDir: string, userId: string, runIds: readonly string[]): Promise<void> {
  const index: UserIndex = { user_id: userId, run_ids: [...runIds] };
  await writeFileAtomic(userFile(dataDir, userId), `${JSON.stringify(index)}\n`, 0o600);
}

/** Records the folders' times: the index is complete as of now. Call last, under the lock. */
async function recordFresh(dataDir: string): Promise<void> {
  const manifest: Manifest = { version: VERSION, runs_mtime_ns: await mtimeNs(runsDir(dataDir)), users_mtime_ns: await mtimeNs(usersDir(dataDir)) };
  await writeFileAtomic(manifestFile(dataDir), `${JSON.stringify(manifest)}\n`, 0o600);
}

/**
 * Rewrites every user's index from the run files, and drops the files of
 * users who own none. Under the lock, checked before each write.
 */
async function rebuild(dataDir: string, lock: HeldLock): Promise<Map<string, string[]>> {
  const owners = await scan(dataDir);
  // No run and no index: nothing to record (a listing of an estate without runs writes nothing).
  if (owners.size === 0 && (await mtimeNs(usersDir(dataDir))) === null) return owners;
  await mkdir(usersDir(dataDir), { recursive: true, mode: 0o700 });
  const keep = new Set<string>();
  for (const [userId, runIds] of owners) {
    await lock.check();
    await writeUserIndex(dataDir, userId, runIds);
    keep.add(path.basename(userFile(dataDir, userId)));
  }
  // Anything else in users/ is an index of a user with no run left, or a temp file of a crashed write (writes happen only under the lock).
  for (const name of await readdir(usersDir(dataDir))) {
    if (keep.has(name)) continue;
    await lock.check();
    await unlink(path.join(usersDir(dataDir), name)).catch(() => {});
  }
  await lock.check();
  await recordFresh(dataDir);
  return owners;
}

/** Errors that mean the data dir cannot be written now; a read then answers from a scan without keeping an index. */
function cannotWrite(err: unknown): boolean {
  const code = ((err instanceof EstateError ? err.cause : err) as NodeJS.ErrnoException | undefined)?.code;
  return code === 'EROFS' || code === 'EACCES' || code === 'EPERM' || code === 'ENOSPC' || code === 'EDQUOT';
}

/**
 * The ids of the runs `userId` owns (and perhaps of some that are gone: check
 * each file). Reads only the user's index while it is fresh; else rebuilds
 * every index first, under the lock.
 */
export async function indexedRunIds(dataDir: string, userId: string): Promise<string[]> {
  if (await isFresh(dataDir)) {
    const ids = await readUserIndex(dataDir, userId);
    if (ids) return ids;
  }
  if ((await mtimeNs(runsDir(dataDir))) === null) return [];
  try {
    return await withFileLock(lockFile(dataDir), async (lock) => {
      // Another process may have rebuilt it while this one waited.
      if (await isFresh(dataDir)) {
        const ids = await readUserIndex(dataDir, userId);
        if (ids) return ids;
      }
      return (await rebuild(dataDir, lock)).get(userId) ?? [];
    });
  } catch (err) {
    if (!cannotWrite(err)) throw err;
    return (await scan(dataDir)).get(userId) ?? [];
  }
}

/**
 * What a change sees of one user's runs and may replace. A change keeps the
 * index a superset of the user's run files at every step: it saves an id
 * before writing its file, and removes a file before saving the ids without it.
 * Each write first checks that the change still holds the lock (it may have
 * been paused past the stale time and replaced): if not, it throws
 * `unavailable` and writes nothing.
 */
export interface IndexedUser {
  /** The user's run ids, complete (maybe with ids whose file is gone). */
  runIds: string[];
  /** Replaces the user's run ids in the index (before writing a run file, after removing one). */
  save: (runIds: readonly string[]) => Promise<void>;
  /** Writes a run's file, atomically (after saving its id). */
  writeRun: (runId: string, text: string) => Promise<void>;
  /** Removes a run's file (before saving the ids without it); false when it was already gone. */
  removeRun: (runId: string) => Promise<boolean>;
}

function runPath(dataDir: string, runId: string): string {
  if (!RUN_ID.test(runId)) throw new EstateError('internal', `not a run id: ${JSON.stringify(runId)}`);
  return path.join(runsDir(dataDir), `${runId}.json`);
}

function indexedUser(dataDir: string, userId: string, runIds: string[], lock: HeldLock): IndexedUser {
  return {
    runIds,
    async save(ids) {
      await lock.check();
      await writeUserIndex(dataDir, userId, ids);
    },
    async writeRun(runId, text) {
      const file = runPath(dataDir, runId);
      await lock.check();
      await writeFileAtomic(file, text, 0o600);
    },
    async removeRun(runId) {
      const file = runPath(dataDir, runId);
      await lock.check();
      try {
        await unlink(file);
        return true;
      } catch (err) {
        if (isNotFound(err)) return false;
        throw err;
      }
    },
  };
}

/**
 * Runs `change` under the training lock with the user's index, rebuilt first
 * if it is not fresh; afterwards records that the index is complete.
 * `lockOptions` are the lock's timings (tests shorten them).
 */
export async function changeUserRuns<T>(dataDir: string, userId: string, change: (user: IndexedUser) => Promise<T>, lockOptions: FileLockOptions = {}): Promise<T> {
  await assertFolders(dataDir);
  await mkdir(runsDir(dataDir), { recursive: true, mode: 0o700 });
  return withFileLock(
    lockFile(dataDir),
    async (lock) => {
      let runIds = (await isFresh(dataDir)) ? await readUserIndex(dataDir, userId) : undefined;
      runIds ??= (await rebuild(dataDir, lock)).get(userId) ?? [];
      await mkdir(usersDir(dataDir), { recursive: true, mode: 0o700 });
      try {
        return await change(indexedUser(dataDir, userId, runIds, lock));
      } finally {
        // Even after a failed change: what was changed is then on record, and a half-done change is harmless (see above).
        // Not after the lock was lost: the successor's change is the one to record.
        await lock
          .check()
          .then(() => recordFresh(dataDir))
          .catch(() => {});
      }
    },
    lockOptions,
  );
}

/** Whether the run's file is there (for dropping index entries whose file is gone). */
export async function runFileExists(dataDir: string, runId: string): Promise<boolean> {
  if (!RUN_ID.test(runId)) return false;
  try {
    return (await lstat(path.join(runsDir(dataDir), `${runId}.json`))).isFile();
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}
