import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';

// A fake kernel for the collector's tests: /proc and /sys files under a
// temp dir, laid out as a host root mounted at a prefix (or as a cgroup
// file system). Files are text; a `device` link marks a physical net
// interface or disk, as in the real /sys.

export interface FakeTree {
  /** Relative path → content. */
  files?: Record<string, string>;
  /** Directories to create (mount points, virtual devices without a device link). */
  dirs?: string[];
  /** Relative paths of `device` links to create (their targets need not exist). */
  deviceLinks?: string[];
}

/** A temp dir removed after the test. */
export async function tempTree(t: Pick<TestContext, 'after'>, under = os.tmpdir()): Promise<string> {
  const dir = await mkdtemp(path.join(under, 'estate-fake-host-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Writes (or overwrites) `tree` under `root`. */
export async function writeTree(root: string, tree: FakeTree): Promise<void> {
  for (const dir of tree.dirs ?? []) await mkdir(path.join(root, dir), { recursive: true });
  for (const [rel, text] of Object.entries(tree.files ?? {})) {
    await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await writeFile(path.join(root, rel), text);
  }
  for (const rel of tree.deviceLinks ?? []) {
    await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await rm(path.join(root, rel), { force: true });
    await symlink('../../devices/pci0000:00/fake', path.join(root, rel));
  }
}

export interface DfFigures {
  total_bytes: number;
  used_bytes: number;
  free_bytes: number;
  mount: string;
  fs_type: string;
}

/** What `df -B1` says of the file system holding `dir` (GNU coreutils). */
export function df(dir: string): DfFigures {
  const out = execFileSync('df', ['-B1', '--output=size,used,avail,fstype,target', dir], { encoding: 'utf8' });
  const [size, used, avail, fstype, ...target] = (out.trim().split('\n')[1] ?? '').trim().split(/\s+/);
  return { total_bytes: Number(size), used_bytes: Number(used), free_bytes: Number(avail), fs_type: String(fstype), mount: target.join(' ') };
}
