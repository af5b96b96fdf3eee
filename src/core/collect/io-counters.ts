import { round1 } from './cpu-times.ts';

/** Bytes received and sent per interface from /proc/net/dev, for the interfaces in `keep`. */
export function parseNetDev(text: string, keep: Set<string>): Record<string, { rx: number; tx: number }> {
  const out: Record<string, { rx: number; tx: number }> = {};
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim();
    if (!keep.has(name)) continue;
    const cols = line.slice(colon + 1).trim().split(/\s+/).map(Number);
    const rx = cols[0];
    const tx = cols[8];
    if (rx === undefined || tx === undefined || !Number.isFinite(rx) || !Number.isFinite(tx)) continue;
    out[name] = { rx, tx };
  }
  return out;
}

/** Bytes read and written per disk from /proc/diskstats (sectors are 512 bytes), for the disks in `keep`. */
export function parseDiskstats(text: string, keep: Set<string>): Record<string, { read: number; write: number }> {
  const out: Record<string, { read: number; write: number }> = {};
  for (const line of text.split('\n')) {
    const cols = line.trim().split(/\s+/);
    const name = cols[2];
    if (name === undefined || !keep.has(name)) continue;
    const read = Number(cols[5]);
    const write = Number(cols[9]);
    if (!Number.isFinite(read) || !Number.isFinite(write)) continue;
    out[name] = { read: read * 512, write: write * 512 };
  }
  return out;
}

/**
 * Per-second rates of summed counters between two readings, over the
 * devices present in both; undefined when no time passed, no device is in
 * both, or any counter
 * went backwards (a reboot, a device reset), so no bogus rate is reported.
 */
export function ratesBetween<K extends string>(
  before: Record<string, Record<K, number>> | undefined,
  after: Record<string, Record<K, number>>,
  seconds: number,
  keys: readonly K[],
): Record<K, number> | undefined {
  if (!before || !(seconds > 0)) return undefined;
  const sums = Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
  let common = 0;
  for (const [device, now] of Object.entries(after)) {
    const then = before[device];
    if (!then) continue;
    common++;
    for (const k of keys) {
      const delta = now[k] - then[k];
      if (!(delta >= 0)) return undefined;
      sums[k] += delta;
    }
  }
  if (common === 0) return undefined;
  for (const k of keys) sums[k] = round1(sums[k] / seconds);
  return sums;
}


export interface IoReading<K extends string> {
  counters?: Record<string, Record<K, number>>;
  rates?: Record<K, number>;
  /** Why the counters could not be read. */
  error?: string;
}

/**
 * The counters of the physical `devices` from a kernel file's text, and
 * their rates since `before`; an error when either could not be read or
 * there is no such device (`none` says so).
 */
export function ioReading<K extends string>(
  file: { text: string } | { error: string },
  devices: Set<string> | { error: string },
  none: string,
  parse: (text: string, keep: Set<string>) => Record<string, Record<K, number>>,
  before: Record<string, Record<K, number>> | undefined,
  seconds: number,
  keys: readonly K[],
): IoReading<K> {
  if ('error' in file) return { error: file.error };
  if ('error' in devices) return { error: devices.error };
  if (devices.size === 0) return { error: none };
  const counters = parse(file.text, devices);
  return { counters, rates: ratesBetween(before, counters, seconds, keys) };
}
