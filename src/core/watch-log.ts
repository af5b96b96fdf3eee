import { type FSWatcher, statSync, watch } from 'node:fs';
import path from 'node:path';

// The one file watcher of estate (node:fs watch on a folder; inotify on Linux).
// Watchers miss changes on some file systems (NFS, some FUSE mounts): every
// user pairs one with a periodic check.

export interface LogWatcher {
  close: () => Promise<void>;
}

export interface WatchOptions {
  /** Whether the watcher keeps the process alive (default true). */
  persistent?: boolean;
}

/**
 * Calls `onChange` whenever `file` is created, written, replaced or removed,
 * by any process. It watches the file's folder, so an editor's save (a new
 * file renamed over the old) is seen like a write; while that folder does not
 * exist (or after it was removed, or its watcher failed) it watches the
 * folder's parent until the folder appears again, so a folder (and log)
 * created later is seen too. Nothing else is looked at. Watcher failures go
 * to `onError` and never throw; a file whose folder and parent are both
 * missing is left to the caller's periodic check.
 */
export function watchFile(file: string, onChange: () => void, onError: (err: unknown) => void = () => {}, options: WatchOptions = {}): LogWatcher {
  const folder = path.dirname(file);
  const parent = path.dirname(folder);
  const name = path.basename(file);
  const folderName = path.basename(folder);
  const persistent = options.persistent ?? true;
  let watcher: FSWatcher | undefined;
  let closed = false;

  const open = (dir: string, listener: (changed: string | null) => void): FSWatcher | undefined => {
    try {
      const w = watch(dir, { persistent }, (_event, changed) => listener(changed === null ? null : String(changed)));
      w.on('error', (err) => {
        w.close();
        if (watcher !== w || closed) return;
        watcher = undefined;
        onError(err);
        // The folder went away (or its watch broke): wait for it from its parent.
        if (dir === folder) watchParent();
      });
      return w;
    } catch {
      return undefined;
    }
  };

  const watchFolder = (): boolean => {
    const inode = folderInode();
    if (inode === undefined) return false;
    const w = open(folder, (changed) => {
      // A watched folder that is removed (or renamed) reports its own name, and no error.
      if ((changed === null || changed === folderName) && folderInode() !== inode) return folderGone(w);
      if (changed === null || changed === name) onChange();
    });
    if (!w) return false;
    watcher = w;
    return true;
  };

  /** The folder was removed or replaced: the file went with it; wait for the folder from its parent. */
  const folderGone = (w: FSWatcher | undefined): void => {
    w?.close();
    if (closed || watcher !== w) return;
    watcher = undefined;
    onChange();
    watchParent();
  };

  const watchParent = (): void => {
    if (closed || folder === parent) return;
    const w = open(parent, (changed) => {
      if (changed !== null && changed !== folderName) return;
      if (closed || watcher !== w) return;
      if (watchFolder()) {
        w?.close();
        onChange();
      }
    });
    watcher = w;
    // The folder may have appeared between the failed watch and this one.
    if (w && watchFolder()) {
      w.close();
      onChange();
    }
  };

  const folderInode = (): number | undefined => {
    try {
      return statSync(folder).ino;
    } catch {
      return undefined;
    }
  };

  if (!watchFolder()) watchParent();
  return {
    close: async () => {
      closed = true;
      watcher?.close();
      watcher = undefined;
    },
  };
}

/** `watchFile`, resolved once watching (for callers that await their watcher's start). */
export async function watchLog(file: string, onChange: () => void, onError: (err: unknown) => void = () => {}): Promise<LogWatcher> {
  return watchFile(file, onChange, onError);
}
