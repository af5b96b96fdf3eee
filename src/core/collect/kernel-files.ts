import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

// Where each kernel figure is read from: the host's root is `root` (`/`
// unless a host prefix is given). With a prefix, the mount table and the
// network come from PID 1's view (the host's), not this process's.
//
// The reads are synchronous: /proc and /sys answer from kernel memory and
// never wait on a disk, and a sample reads some twenty of them. Each
// asynchronous read is an open, a stat, reads and a close, each a trip
// through the thread pool and a promise; those trips were most of the
// CPU time a running collector spends (BENCHMARKS.md, "Issue 24: the
// collector").

export function isPrefixed(root: string): boolean {
  return path.resolve(root) !== '/';
}

/** `root/rel`, e.g. `hostPath('/host', 'proc/stat')` is `/host/proc/stat`. */
export function hostPath(root: string, rel: string): string {
  return path.join(root, rel);
}

export function mountinfoPath(root: string): string {
  return isPrefixed(root) ? hostPath(root, 'proc/1/mountinfo') : '/proc/self/mountinfo';
}

export function netDevPath(root: string): string {
  return isPrefixed(root) ? hostPath(root, 'proc/1/net/dev') : '/proc/net/dev';
}

/** A file's text, or the reason it could not be read (its error code). */
export async function readKernelText(file: string): Promise<{ text: string } | { error: string }> {
  try {
    return { text: readFileSync(file, 'utf8') };
  } catch (err) {
    return { error: `${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}` };
  }
}

/** Names in `dir` that have a `device` entry (a physical net interface or block device). */
export async function namesWithDevice(dir: string): Promise<Set<string> | { error: string }> {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    return { error: `${dir}: ${(err as NodeJS.ErrnoException).code ?? String(err)}` };
  }
  const found = new Set<string>();
  for (const name of names) {
    try {
      lstatSync(path.join(dir, name, 'device'));
      found.add(name);
    } catch {
      // no device link: virtual
    }
  }
  return found;
}
