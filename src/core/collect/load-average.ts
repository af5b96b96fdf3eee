/** load1, load5 and load15 from /proc/loadavg. */
export function parseLoadAverage(text: string): { load1: number; load5: number; load15: number } | undefined {
  const [a, b, c] = text.trim().split(/\s+/).map(Number);
  if (![a, b, c].every((n) => typeof n === 'number' && Number.isFinite(n))) return undefined;
  return { load1: a as number, load5: b as number, load15: c as number };
}

/** Seconds since boot from /proc/uptime (its first column), whole seconds. */
export function parseUptime(text: string): number | undefined {
  const s = Number(text.trim().split(/\s+/)[0]);
  return Number.isFinite(s) && s >= 0 ? Math.floor(s) : undefined;
}
