import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync, realpathSync, type Stats } from 'node:fs';
import { type FileHandle, lstat, open, realpath } from 'node:fs/promises';
import path from 'node:path';
import { EstateError } from '../errors.ts';
import { dataDirOf } from './data-files.ts';
import { isNotFound } from './fs-errors.ts';

// Every file of the data dir that estate reads or writes is opened here, so
// that a symbolic link never takes a read or a write out of the data dir:
//
// - the file itself is opened with O_NOFOLLOW: a link in its place is
//   refused, wherever it points, even when it dangles (no file is created
//   through it);
// - the folders between the data dir and the file (`work`, `state`,
//   `training/runs`…) must resolve inside the data dir: a folder that is a
//   link leading outside (or nowhere) is refused. The data dir itself may be
//   a link: it is the operator's choice.
//
// - the file must be a regular file: a folder, a FIFO, a socket or a device
//   in its place is refused. O_NONBLOCK keeps a FIFO from blocking the open
//   (on a regular file it changes nothing); the open file is then checked.
//
// A refusal is an `unavailable` EstateError (503, exit 1) whose message names
// the file or folder relative to the data dir, never where a link points.

const FLAGS = {
  read: constants.O_RDONLY,
  /** Read and append, created (mode 0600) when missing. */
  append: constants.O_RDWR | constants.O_APPEND | constants.O_CREAT,
  /** Read and append, only when the file is there (ENOENT otherwise). */
  'append-existing': constants.O_RDWR | constants.O_APPEND,
} as const;

export type DataFileMode = keyof typeof FLAGS;

const NO_FOLLOW = constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** Opens a file of the data dir without following a link (see above). Errors of the open itself (ENOENT…) are thrown as they are. */
export async function openDataFile(file: string, mode: DataFileMode = 'read'): Promise<FileHandle> {
  return (await openDataFileInfo(file, mode)).handle;
}

/** `openDataFile`, with the stats of the open file (its size…) that the open checked: a reader needs no second fstat. */
export async function openDataFileInfo(file: string, mode: DataFileMode = 'read'): Promise<{ handle: FileHandle; info: Stats }> {
  await assertInsideDataDir(file);
  let handle: FileHandle;
  try {
    handle = await open(file, FLAGS[mode] | NO_FOLLOW, 0o600);
  } catch (err) {
    throw refusal(err, file);
  }
  let info: Stats;
  try {
    info = await handle.stat();
  } catch (err) {
    await handle.close().catch(() => {});
    throw err;
  }
  if (info.isFile()) return { handle, info };
  await handle.close().catch(() => {});
  throw notRegular(file, info);
}

/** The text of a file of the data dir, read without following a link. */
export async function readDataFile(file: string): Promise<string> {
  const handle = await openDataFile(file);
  try {
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/** `readDataFile`, for the few readers that must be synchronous. */
export function readDataFileSync(file: string): string {
  assertInsideDataDirSync(file);
  let fd: number;
  try {
    fd = openSync(file, FLAGS.read | NO_FOLLOW);
  } catch (err) {
    throw refusal(err, file);
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw notRegular(file, info);
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/** Why `openDataFile` refused a file: what stands in its place (not a folder on the way). */
export type FileRefusal = 'link' | 'not a regular file';

const refusals = new WeakMap<EstateError, FileRefusal>();

/** Whether `err` is `openDataFile`'s refusal of what stands in the file's place (a link, a folder, a FIFO…), and which. */
export function fileRefusal(err: unknown): FileRefusal | undefined {
  return err instanceof EstateError ? refusals.get(err) : undefined;
}

/** Whether opening `file` checks folders of the data dir on the way (it lies under one); false for a file directly in the data dir. */
export function hasDataFolders(file: string): boolean {
  return foldersOf(path.dirname(path.resolve(file))) !== undefined;
}

/** Refuses `file` when a folder between the data dir and it resolves outside the data dir (or nowhere). */
export async function assertInsideDataDir(file: string): Promise<void> {
  await assertDataFolder(path.dirname(path.resolve(file)));
}

/** Refuses `folder` of the data dir when it, or a folder above it in the data dir, resolves outside the data dir (or nowhere). */
export async function assertDataFolder(folder: string): Promise<void> {
  const at = foldersOf(folder);
  if (!at) return;
  let inside: boolean;
  try {
    inside = isWithin(await realpath(at.root), await realpath(at.folder));
  } catch (err) {
    if (!isNotFound(err) && !isLoop(err)) throw err;
    // Not there (yet): fine unless a link on the way would have it made elsewhere.
    inside = !(await someLink(at.root, at.folder));
  }
  if (!inside) throw outside(at.root, at.folder);
}

function assertInsideDataDirSync(file: string): void {
  const at = foldersOf(path.dirname(path.resolve(file)));
  if (!at) return;
  let inside: boolean;
  try {
    inside = isWithin(realpathSync(at.root), realpathSync(at.folder));
  } catch (err) {
    if (!isNotFound(err) && !isLoop(err)) throw err;
    inside = !someLinkSync(at.root, at.folder);
  }
  if (!inside) throw outside(at.root, at.folder);
}

/** The data dir `folder` is in, when it is a folder inside one (not the data dir itself). */
function foldersOf(folder: string): { root: string; folder: string } | undefined {
  const resolved = path.resolve(folder);
  const root = dataDirOf(resolved);
  return root === undefined || resolved === root ? undefined : { root, folder: resolved };
}

function isWithin(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** The folders from just below `root` down to `folder`. */
function foldersBetween(root: string, folder: string): string[] {
  const out: string[] = [];
  for (let dir = folder; dir !== root && dir !== path.dirname(dir); dir = path.dirname(dir)) out.unshift(dir);
  return out;
}

/** Whether a folder on the way from `root` to `folder`, up to the first missing one, is a link. */
async function someLink(root: string, folder: string): Promise<boolean> {
  for (const dir of foldersBetween(root, folder)) {
    try {
      if ((await lstat(dir)).isSymbolicLink()) return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }
  return false;
}

function someLinkSync(root: string, folder: string): boolean {
  for (const dir of foldersBetween(root, folder)) {
    try {
      if (lstatSync(dir).isSymbolicLink()) return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }
  return false;
}

function isLoop(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === 'ELOOP';
}

/** The name of `p` for messages: relative to its data dir, else its base name. */
function nameOf(p: string, root = dataDirOf(p)): string {
  return root === undefined ? path.basename(p) : path.relative(root, path.resolve(p));
}

/** ELOOP from an O_NOFOLLOW open: the file is a link; EISDIR (an open to write): a folder. Any other error is returned as it is. */
function refusal(err: unknown, file: string): unknown {
  if ((err as NodeJS.ErrnoException | undefined)?.code === 'EISDIR') return refused('not a regular file', `${nameOf(file)} in the data dir is a folder, not a file: estate reads and writes only regular files there; replace it with the file itself`, err);
  if (!isLoop(err)) return err;
  return refused('link', `${nameOf(file)} in the data dir is a symbolic link, which estate never follows: replace it with the file itself`, err);
}

/** A folder, FIFO, socket or device in the place of a file of the data dir. */
function notRegular(file: string, info: Stats): EstateError {
  const what = info.isDirectory() ? 'a folder' : info.isFIFO() ? 'a FIFO (named pipe)' : info.isSocket() ? 'a socket' : 'a device';
  return refused('not a regular file', `${nameOf(file)} in the data dir is ${what}, not a file: estate reads and writes only regular files there; replace it with the file itself`);
}

function refused(why: FileRefusal, message: string, cause?: unknown): EstateError {
  const err = new EstateError('unavailable', message, cause === undefined ? {} : { cause });
  refusals.set(err, why);
  return err;
}

function outside(root: string, folder: string): EstateError {
  return new EstateError('unavailable', `${nameOf(folder, root)} in the data dir is a symbolic link leading out of it (or nowhere); estate never reads or writes outside the data dir: make it a real folder (or a mount)`);
}
