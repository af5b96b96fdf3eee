import type { CpuTimes } from './sample-types.ts';

/**
 * The aggregate `cpu` line of /proc/stat as busy and total ticks, and the
 * number of `cpuN` lines (cores). Idle is idle + iowait; total is the first
 * eight columns (guest time is already inside user and nice).
 *
 * @example parseCpuTimes('cpu  10 0 5 80 5 0 0 0 0 0\ncpu0 …') // { times: { busy: 15, total: 100 }, cores: 1 }
 */
export function parseCpuTimes(stat: string): { times: CpuTimes; cores: number } | undefined {
  let times: CpuTimes | undefined;
  let cores = 0;
  for (const line of stat.split('\n')) {
    if (/^cpu\d+\s/.test(line)) cores++;
    else if (/^cpu\s/.test(line)) {
      const cols = line.trim().split(/\s+/).slice(1, 9).map(Number);
      if (cols.length < 4 || cols.some((n) => !Number.isFinite(n))) return undefined;
      const total = cols.reduce((a, b) => a + b, 0);
      const idle = (cols[3] ?? 0) + (cols[4] ?? 0);
      times = { busy: total - idle, total };
    }
  }
  return times && cores > 0 ? { times, cores } : undefined;
}

/** Busy share of all cores between two readings, 0-100; undefined when no tick passed or a counter went backwards. */
export function cpuPctBetween(before: CpuTimes, after: CpuTimes): number | undefined {
  const total = after.total - before.total;
  const busy = after.busy - before.busy;
  if (total <= 0 || busy < 0) return undefined;
  return round1((busy / total) * 100);
}

export function round1(n: number): number {
  return Math.round(n * 10) / 10;
}
