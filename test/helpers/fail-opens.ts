import { createRequire, syncBuiltinESMExports } from 'node:module';

// An unexpected errno (EIO, a disk going bad) from opening one file of the
// data dir, with the message the kernel's error carries (`EIO: i/o error,
// open '/abs/path'`): what estate must answer as an internal error without
// showing the path. The in-process counterpart of fail-opens-preload.mjs.

const fsPromises = createRequire(import.meta.url)('node:fs/promises') as typeof import('node:fs/promises');

/** An error shaped like the one `open(2)` gives for `file`. */
export function openError(code: string, file: string): NodeJS.ErrnoException {
  const messages: Record<string, string> = { EIO: 'i/o error', ENXIO: 'no such device or address', EMFILE: 'too many open files' };
  return Object.assign(new Error(`${code}: ${messages[code] ?? 'failed'}, open '${file}'`), { code, syscall: 'open', path: file });
}

/**
 * Makes every `open` (node:fs/promises, every importer) of a path ending with
 * `suffix` fail with `code` until the test ends or the returned function is
 * called.
 */
export function failOpens(t: { after: (fn: () => unknown) => void }, code: string, suffix: string): () => void {
  const original = fsPromises.open;
  const failing = ((file: Parameters<typeof original>[0], ...rest: unknown[]) => {
    if (String(file).endsWith(suffix)) return Promise.reject(openError(code, String(file)));
    return (original as (...a: unknown[]) => ReturnType<typeof original>)(file, ...rest);
  }) as typeof original;
  fsPromises.open = failing;
  syncBuiltinESMExports();
  const restore = () => {
    if (fsPromises.open !== failing) return;
    fsPromises.open = original;
    syncBuiltinESMExports();
  };
  t.after(restore);
  return restore;
}
