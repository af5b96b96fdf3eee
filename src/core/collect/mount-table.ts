// Local file systems from a mount table (/proc/<pid>/mountinfo): pseudo,
// network and read-only image file systems left out, one mount per device.

/**
 * File system types that are not local storage: kernel views (proc, sysfs,
 * cgroup…), memory (tmpfs, ramfs), network shares (nfs, cifs…), read-only
 * images (squashfs, iso9660: always full), and overlay: on a host running
 * containers every container's root is an overlay mount of the same disk,
 * which is reported once through its own file system. The data dir's file
 * system is added back whatever its type (a container's `/` is overlay).
 */
export const LEFT_OUT_FS_TYPES = new Set([
  'autofs', 'binfmt_misc', 'bpf', 'ceph', 'cgroup', 'cgroup2', 'cifs', 'configfs', 'debugfs', 'devpts',
  'devtmpfs', 'efivarfs', 'fuse.gvfsd-fuse', 'fuse.lxcfs', 'fuse.portal', 'fuse.sshfs', 'fusectl',
  'glusterfs', 'hugetlbfs', 'iso9660', 'mqueue', 'nfs', 'nfs4', 'nfsd', 'nsfs', 'overlay', 'proc',
  'pstore', 'ramfs', 'rpc_pipefs', 'securityfs', 'selinuxfs', 'smb3', 'squashfs', 'sysfs', 'tmpfs',
  'tracefs', 'udf', 'zram',
]);

export interface MountEntry {
  /** `major:minor` of the file system's device. */
  device: string;
  /** The directory of the file system mounted (a bind mount's is below `/`). */
  fsRoot: string;
  mount: string;
  fsType: string;
}

// mountinfo escapes space, tab, newline and backslash as \ooo.
function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/** Every entry of a mountinfo text: `id parent major:minor root mount opts [optional…] - type source superopts`. */
export function parseMountinfo(text: string): MountEntry[] {
  const entries: MountEntry[] = [];
  for (const line of text.split('\n')) {
    const cols = line.split(' ');
    const dash = cols.indexOf('-', 6);
    const [device, fsRoot, mount] = [cols[2], cols[3], cols[4]];
    const fsType = cols[dash + 1];
    if (dash < 0 || !device || !fsRoot || !mount || !fsType) continue;
    entries.push({ device, fsRoot: unescape(fsRoot), mount: unescape(mount), fsType });
  }
  return entries;
}

/**
 * The local file systems, one per device: of several mounts of one device,
 * a mount of its whole file system (root `/`) over a bind mount of a part,
 * then the shortest path (so `/` over `/etc/hosts` in a container).
 */
export function localMounts(entries: MountEntry[]): MountEntry[] {
  const byDevice = new Map<string, MountEntry>();
  for (const e of entries) {
    if (LEFT_OUT_FS_TYPES.has(e.fsType)) continue;
    const kept = byDevice.get(e.device);
    if (!kept || better(e, kept)) byDevice.set(e.device, e);
  }
  return [...byDevice.values()];
}

function better(a: MountEntry, b: MountEntry): boolean {
  const aWhole = a.fsRoot === '/';
  const bWhole = b.fsRoot === '/';
  if (aWhole !== bWhole) return aWhole;
  return a.mount.length < b.mount.length;
}

/** The mount that holds `file` (an absolute, resolved path): the longest mount point above it, the last mounted among equals. */
export function mountOf(entries: MountEntry[], file: string): MountEntry | undefined {
  let found: MountEntry | undefined;
  for (const e of entries) {
    const within = e.mount === '/' || file === e.mount || file.startsWith(e.mount + '/');
    if (within && (!found || e.mount.length >= found.mount.length)) found = e;
  }
  return found;
}
