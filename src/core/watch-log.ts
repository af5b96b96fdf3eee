import path from 'node:path';
import { watch } from 'chokidar';

export interface LogWatcher {
  close: () => Promise<void>;
}

/**
 * Calls `onChange` whenever `file` is created, written, replaced or removed,
 * by any process. It watches the file's folder from that folder's parent, so
 * a folder (and log) created later is seen too; nothing else in either
 * folder is looked at. Resolves once watching. Watcher failures go to
 * `onError` and never throw.
 */
export async function watchLog(file: string, onChange: () => void, onError: (err: unknown) => void = () => {}): Promise<LogWatcher> {
  const folder = path.dirname(file);
  const root = path.dirname(folder);
  const wanted = new Set([root, folder, file]);
  const watcher = watch(root, { ignoreInitial: true, depth: 1, ignored: (p: string) => !wanted.has(p) });
  watcher.on('all', (_event, changed) => {
    if (changed === file) onChange();
  });
  watcher.on('error', onError);
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  return { close: () => watcher.close() };
}
