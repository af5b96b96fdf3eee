import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';

/** An error shaped like the one the kernel's `write(2)` gives, e.g. `errnoError('ENOSPC')`. */
export function errnoError(code: string): NodeJS.ErrnoException {
  const messages: Record<string, string> = { ENOSPC: 'no space left on device', EDQUOT: 'disk quota exceeded', EROFS: 'read-only file system', EIO: 'i/o error' };
  return Object.assign(new Error(`${code}: ${messages[code] ?? 'failed'}, write`), { code, syscall: 'write' });
}

/**
 * Makes every write through a FileHandle in this process (`write`, `writev`,
 * `writeFile`, `appendFile`) fail with `code`, as a full disk or a read-only
 * mount would, until the returned function is called or the test ends. The
 * simulation for machines that cannot mount a tiny file system.
 */
export async function failWrites(t: { after: (fn: () => unknown) => void }, code: string): Promise<() => void> {
  const probe = await open(process.execPath, 'r');
  const proto = Object.getPrototypeOf(probe) as FileHandle;
  await probe.close();
  const originals = { write: proto.write, writev: proto.writev, writeFile: proto.writeFile, appendFile: proto.appendFile };
  const failing = async () => {
    throw errnoError(code);
  };
  Object.assign(proto, { write: failing, writev: failing, writeFile: failing, appendFile: failing });
  const restore = () => {
    Object.assign(proto, originals);
  };
  t.after(restore);
  return restore;
}
