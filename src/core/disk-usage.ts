import { statfs } from 'node:fs/promises';

export interface DiskUsage {
  path: string;
  total_bytes: number;
  used_bytes: number;
  free_bytes: number;
  used_pct: number;
}

/** Usage of the file system that holds `dir`, as `df` reports it (free = available to unprivileged users). */
export async function diskUsage(dir: string): Promise<DiskUsage> {
  const s = await statfs(dir);
  const total = s.blocks * s.bsize;
  const free = s.bavail * s.bsize;
  const used = total - s.bfree * s.bsize;
  const usable = used + free;
  return {
    path: dir,
    total_bytes: total,
    used_bytes: used,
    free_bytes: free,
    used_pct: usable > 0 ? Math.round((used / usable) * 1000) / 10 : 0,
  };
}
