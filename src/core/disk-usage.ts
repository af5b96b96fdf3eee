import { statfs } from 'node:fs/promises';

export interface DiskUsage {
  path: string;
  total_bytes: number;
  used_bytes: number;
  free_bytes: number;
  used_pct: number;
}

/** Sizes as `df` computes them: total = blocks × size, used = (blocks − free) × size, free = blocks available to unprivileged users × size. */
export async function fileSystemSizes(dir: string): Promise<{ total_bytes: number; used_bytes: number; free_bytes: number }> {
  const s = await statfs(dir, { bigint: true });
  return {
    total_bytes: Number(s.blocks * s.bsize),
    used_bytes: Number((s.blocks - s.bfree) * s.bsize),
    free_bytes: Number(s.bavail * s.bsize),
  };
}

/** Used share of a file system as `df` shows it: used / (used + free) × 100, one decimal. */
export function diskUsedPct(d: { used_bytes: number; free_bytes: number }): number {
  const usable = d.used_bytes + d.free_bytes;
  return usable > 0 ? Math.round((d.used_bytes / usable) * 1000) / 10 : 0;
}

/** Usage of the file system that holds `dir`, as `df` reports it (free = available to unprivileged users). */
export async function diskUsage(dir: string): Promise<DiskUsage> {
  const sizes = await fileSystemSizes(dir);
  return { path: dir, ...sizes, used_pct: diskUsedPct(sizes) };
}
