import { readFileSync } from 'node:fs';
import path from 'node:path';

// A container's own memory (DESIGN.md 7a): when this process's cgroup has a
// memory limit below the machine's MemTotal, the limit is the total and
// usage minus inactive file cache is the used memory (what `docker stats`
// shows). cgroup v2: memory.max, memory.current, `inactive_file` of
// memory.stat; v1: memory.limit_in_bytes, memory.usage_in_bytes,
// `total_inactive_file`. The cgroup is looked for first at this process's
// path (from /proc/self/cgroup) under the mount, then at the mount's top
// (a container with its own cgroup namespace, or v1 with the container's
// cgroup mounted there).

export interface CgroupMemory {
  limit: number;
  /** Usage minus inactive file cache; undefined when usage or memory.stat could not be read. */
  used?: number;
  /** Why `used` is missing. */
  error?: string;
}

/** A cgroup file's text (read at once, as kernel-files.ts reads /proc), or undefined. */
async function readText(file: string): Promise<string | undefined> {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function statField(stat: string, name: string): number | undefined {
  const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(stat);
  return m ? Number(m[1]) : undefined;
}

/** This process's cgroup paths from /proc/self/cgroup text: v2's (`0::PATH`) and v1's memory controller's. */
export function ownCgroupPaths(text: string): { v2?: string; v1?: string } {
  const paths: { v2?: string; v1?: string } = {};
  for (const line of text.split('\n')) {
    const [id, controllers, p] = [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1, line.lastIndexOf(':')), line.slice(line.lastIndexOf(':') + 1)];
    if (!p) continue;
    if (id === '0' && controllers === '') paths.v2 = p;
    else if (controllers.split(',').includes('memory')) paths.v1 = p;
  }
  return paths;
}

interface Layout {
  limit: string;
  usage: string;
  inactive: string;
}
const V2: Layout = { limit: 'memory.max', usage: 'memory.current', inactive: 'inactive_file' };
const V1: Layout = { limit: 'memory.limit_in_bytes', usage: 'memory.usage_in_bytes', inactive: 'total_inactive_file' };

/**
 * The memory limit and usage of this process's cgroup under `cgroupRoot`,
 * when it has a limit below `memTotal`; undefined when it has none (or no
 * cgroup memory controller is found), which means the host's view applies.
 */
export async function cgroupMemory(cgroupRoot: string, ownCgroup: string, memTotal: number): Promise<CgroupMemory | undefined> {
  const own = ownCgroupPaths(ownCgroup);
  const candidates: [string, Layout][] = [];
  if (own.v2) candidates.push([path.join(cgroupRoot, own.v2), V2]);
  candidates.push([cgroupRoot, V2]);
  if (own.v1) candidates.push([path.join(cgroupRoot, 'memory', own.v1), V1]);
  candidates.push([path.join(cgroupRoot, 'memory'), V1]);
  for (const [dir, layout] of candidates) {
    const limitText = await readText(path.join(dir, layout.limit));
    if (limitText === undefined) continue;
    const limit = Number(limitText.trim());
    // "max" (v2) or a huge number (v1's unlimited) is no limit.
    if (!Number.isFinite(limit) || limit >= memTotal) return undefined;
    const usage = await readText(path.join(dir, layout.usage));
    const stat = await readText(path.join(dir, 'memory.stat'));
    const inactive = stat === undefined ? undefined : statField(stat, layout.inactive);
    const usageBytes = usage === undefined ? NaN : Number(usage.trim());
    if (!Number.isFinite(usageBytes) || inactive === undefined) {
      return { limit, error: `${dir}: ${layout.usage} or ${layout.inactive} of memory.stat unreadable` };
    }
    return { limit, used: Math.max(0, usageBytes - inactive) };
  }
  return undefined;
}
