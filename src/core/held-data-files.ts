import { type FileHandle, lstat } from 'node:fs/promises';
import path from 'node:path';
import { isNotFound } from './fs-errors.ts';
import { hasDataFolders, openDataFileInfo } from './open-data-file.ts';

// The logs whose ends answers are read from (trends.jsonl, disk.jsonl…) are
// opened once and their handles kept: a read then costs an lstat of the path
// and the read itself, not an open, an fstat, the read and a close, each a
// trip through the thread pool. A kept handle serves a read only while the
// path still names the very file it has open (a regular file, no link, the
// same device and inode), so a log that was rotated, replaced or removed is
// opened anew, and refused as openDataFile refuses (a link, a FIFO…);
// appends, truncations and rewrites in place are read as they are. Only files
// directly in the data dir are kept: one under a folder of it is opened each
// time, with the checks of its folders (openDataFile).

/** At most this many handles are kept; past it the oldest goes (closed once its reads are done). */
const MAX_HELD = 16;

interface Held {
  handle: FileHandle;
  dev: bigint;
  ino: bigint;
  /** Reads using the handle now. */
  readers: number;
  /** No longer kept: closed when its last read is done. */
  dropped: boolean;
}

const held = new Map<string, Held>();

/** A file of the data dir open for one read: its size at the start of the read; call `done()` when the read is over. */
export interface FileRead {
  handle: FileHandle;
  size: number;
  done: () => Promise<void>;
}

/**
 * Opens `file` of the data dir for a read (see openDataFile: a link, a
 * folder or another non-regular file in its place is refused; a missing file
 * throws ENOENT), with a handle kept from an earlier read of the same file
 * when the path still names it.
 */
export async function openForRead(file: string): Promise<FileRead> {
  const resolved = path.resolve(file);
  if (hasDataFolders(resolved)) {
    const { handle, info } = await openDataFileInfo(file);
    return { handle, size: info.size, done: () => handle.close() };
  }
  const kept = held.get(resolved);
  if (kept !== undefined) {
    let info;
    try {
      info = await lstat(resolved, { bigint: true });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (info?.isFile() && !kept.dropped && info.dev === kept.dev && info.ino === kept.ino) {
      kept.readers++;
      return { handle: kept.handle, size: Number(info.size), done: () => release(kept) };
    }
    if (held.get(resolved) === kept) {
      held.delete(resolved);
      drop(kept);
    }
  }
  const { handle, info } = await openDataFileInfo(file);
  let ids;
  try {
    ids = await handle.stat({ bigint: true });
  } catch (err) {
    await handle.close().catch(() => {});
    throw err;
  }
  const entry: Held = { handle, dev: ids.dev, ino: ids.ino, readers: 1, dropped: false };
  const before = held.get(resolved);
  if (before !== undefined) drop(before);
  held.delete(resolved);
  held.set(resolved, entry);
  if (held.size > MAX_HELD) {
    const [oldest, first] = held.entries().next().value as [string, Held];
    held.delete(oldest);
    drop(first);
  }
  return { handle, size: info.size, done: () => release(entry) };
}

async function release(entry: Held): Promise<void> {
  entry.readers--;
  if (entry.dropped && entry.readers === 0) await entry.handle.close();
}

function drop(entry: Held): void {
  entry.dropped = true;
  if (entry.readers === 0) entry.handle.close().catch(() => {});
}
