import { realpath } from 'node:fs/promises';
import { fileSystemSizes } from '../disk-usage.ts';
import { hostPath, mountinfoPath, readKernelText } from './kernel-files.ts';
import { localMounts, mountOf, parseMountinfo, type MountEntry } from './mount-table.ts';
import type { DiskSnapshot } from './sample-types.ts';

export interface DiskReading {
  disks: DiskSnapshot[];
  /** Names of what could not be read (`mounts`, `disk:<mount>`), and why. */
  missing: { name: string; reason: string }[];
}

/**
 * One snapshot per local file system of the host at `root` (its mount
 * table, each file system sized at `root/<mount>`, named by the host's
 * path), plus the file system holding `dataDir` (sized at its own path)
 * when it is not among them. With a host prefix the data dir's mount is
 * this process's path: when it names a host mount already shown (a
 * container's overlay `/` beside the host's `/`), it is not added twice.
 */
export async function readDiskSnapshots(root: string, dataDir: string, ts: string, node: string): Promise<DiskReading> {
  const missing: DiskReading['missing'] = [];
  const table = await readKernelText(mountinfoPath(root));
  const mounts: { entry: MountEntry; at: string }[] = [];
  if ('error' in table) missing.push({ name: 'mounts', reason: table.error });
  else for (const entry of localMounts(parseMountinfo(table.text))) mounts.push({ entry, at: hostPath(root, entry.mount) });

  const own = root === '/' && 'text' in table ? table : await readKernelText('/proc/self/mountinfo');
  if ('text' in own) {
    const dataMount = mountOf(parseMountinfo(own.text), await realpath(dataDir).catch(() => dataDir));
    const shown = mounts.some((m) => m.entry.device === dataMount?.device || m.entry.mount === dataMount?.mount);
    if (dataMount && !shown) mounts.push({ entry: dataMount, at: dataMount.mount });
  } else missing.push({ name: 'mounts', reason: own.error });

  const disks: DiskSnapshot[] = [];
  for (const { entry, at } of mounts) {
    try {
      const sizes = await fileSystemSizes(at);
      if (sizes.total_bytes > 0) disks.push({ ts, node, mount: entry.mount, fs_type: entry.fsType, ...sizes });
    } catch (err) {
      missing.push({ name: `disk:${entry.mount}`, reason: `${at}: ${(err as NodeJS.ErrnoException).code ?? String(err)}` });
    }
  }
  return { disks, missing };
}
