import { setTimeout as sleep } from 'node:timers/promises';
import { cgroupMemory } from './cgroup-memory.ts';
import { cpuPctBetween, parseCpuTimes, round1 } from './cpu-times.ts';
import { readDiskSnapshots } from './disk-snapshots.ts';
import { ioReading, parseDiskstats, parseNetDev } from './io-counters.ts';
import { pulseChecks, worst } from './judge-pulse.ts';
import { hostPath, isPrefixed, namesWithDevice, netDevPath, readKernelText } from './kernel-files.ts';
import { parseLoadAverage, parseUptime } from './load-average.ts';
import { hostMemory, parseMeminfo } from './meminfo.ts';
import { DEFAULT_THRESHOLDS, type CpuTimes, type Sample, type SampleCounters, type SampleOptions, type TrendPoint } from './sample-types.ts';

type Missing = { name: string; reason: string }[];

async function readCpu(root: string): Promise<{ times: CpuTimes; cores: number } | { error: string }> {
  const file = hostPath(root, 'proc/stat');
  const read = await readKernelText(file);
  if ('error' in read) return read;
  return parseCpuTimes(read.text) ?? { error: `${file}: no cpu line` };
}

/**
 * One sample of the node whose root is `options.root` (DESIGN.md 7a): its
 * trend point, disk snapshots, pulse entry and heartbeat entry, and the
 * counters to pass as `previous` next time. Only reads: nothing is written.
 * A figure that cannot be read is left out and named in `missing` and in
 * the pulse check `collector`; rates need `previous` and are left out
 * (unnamed) without it or when a counter went backwards.
 *
 * @example
 *   const first = await takeSample({ node: 'hub', dataDir });
 *   const next = await takeSample({ node: 'hub', dataDir, previous: first.counters });
 */
export async function takeSample(options: SampleOptions): Promise<Sample> {
  const root = options.root ?? '/';
  const thresholds = options.thresholds ?? DEFAULT_THRESHOLDS;
  const previous = options.previous;
  const missing: Missing = [];
  const miss = (names: string[], reason: string): void => {
    for (const name of names) missing.push({ name, reason });
  };

  // CPU: since the previous counters, else (first sample, a reboot, no tick passed) over a short window.
  let cpu = await readCpu(root);
  let cpuPct: number | undefined;
  if ('times' in cpu) {
    cpuPct = previous?.cpu ? cpuPctBetween(previous.cpu, cpu.times) : undefined;
    if (cpuPct === undefined) {
      await sleep(options.cpuWindowMs ?? 250);
      const before = cpu.times;
      cpu = await readCpu(root);
      if ('times' in cpu) {
        cpuPct = cpuPctBetween(before, cpu.times);
        if (cpuPct === undefined) miss(['cpu_pct'], 'no CPU time passed between two readings of /proc/stat');
      }
    }
  }
  if ('error' in cpu) miss(['cpu_pct'], cpu.error);

  const [loadavg, meminfo, uptime, netDev, interfaces, diskstats, blockDevices] = await Promise.all([
    readKernelText(hostPath(root, 'proc/loadavg')),
    readKernelText(hostPath(root, 'proc/meminfo')),
    readKernelText(hostPath(root, 'proc/uptime')),
    readKernelText(netDevPath(root)),
    namesWithDevice(hostPath(root, 'sys/class/net')),
    readKernelText(hostPath(root, 'proc/diskstats')),
    namesWithDevice(hostPath(root, 'sys/block')),
  ]);
  const now = options.now ?? new Date();
  const ts = now.toISOString();
  const trend: TrendPoint = { ts, node: options.node };
  if (cpuPct !== undefined) trend.cpu_pct = cpuPct;

  const load = 'text' in loadavg ? parseLoadAverage(loadavg.text) : undefined;
  if (load) Object.assign(trend, load);
  else miss(['load1', 'load5', 'load15'], 'error' in loadavg ? loadavg.error : 'proc/loadavg: unreadable');

  // Memory: the host's, or this cgroup's when its limit is below MemTotal (never with a host prefix).
  const fields = 'text' in meminfo ? parseMeminfo(meminfo.text) : new Map<string, number>();
  const memReason = 'error' in meminfo ? meminfo.error : 'proc/meminfo: field absent';
  const host = hostMemory(fields);
  let total = host.total;
  let used = host.used;
  let scope: 'host' | 'cgroup' = 'host';
  if (!isPrefixed(root) && total !== undefined) {
    const own = await readKernelText('/proc/self/cgroup');
    const cgroup = 'text' in own ? await cgroupMemory(options.cgroupRoot ?? '/sys/fs/cgroup', own.text, total) : undefined;
    if (cgroup) {
      scope = 'cgroup';
      total = cgroup.limit;
      used = cgroup.used;
      if (cgroup.error) miss(['mem_used_bytes', 'mem_used_pct'], cgroup.error);
    }
  }
  if (total !== undefined) trend.mem_total_bytes = total;
  else miss(['mem_total_bytes'], memReason);
  if (used !== undefined) trend.mem_used_bytes = used;
  else if (scope === 'host') miss(['mem_used_bytes'], memReason);
  if (total !== undefined && total > 0 && used !== undefined) trend.mem_used_pct = round1((used / total) * 100);
  else if (scope === 'host') miss(['mem_used_pct'], memReason);
  if (total !== undefined) trend.mem_scope = scope;
  if (host.swapUsed !== undefined) trend.swap_used_bytes = host.swapUsed;
  else miss(['swap_used_bytes'], memReason);

  const up = 'text' in uptime ? parseUptime(uptime.text) : undefined;
  if (up !== undefined) trend.uptime_s = up;
  else miss(['uptime_s'], 'error' in uptime ? uptime.error : 'proc/uptime: unreadable');

  // Network and disk I/O: counters now, rates since the previous counters.
  const counters: SampleCounters = { ts_ms: now.getTime() };
  if ('times' in cpu) counters.cpu = cpu.times;
  const seconds = previous ? (counters.ts_ms - previous.ts_ms) / 1000 : 0;
  const net = ioReading(netDev, interfaces, `no physical interface (with a device link) in ${hostPath(root, 'sys/class/net')}`, parseNetDev, previous?.net, seconds, ['rx', 'tx'] as const);
  if (net.error) miss(['net_rx_bytes_s', 'net_tx_bytes_s'], net.error);
  if (net.counters) counters.net = net.counters;
  if (net.rates) Object.assign(trend, { net_rx_bytes_s: net.rates.rx, net_tx_bytes_s: net.rates.tx });
  const disk = ioReading(diskstats, blockDevices, `no physical disk (with a device link) in ${hostPath(root, 'sys/block')}`, parseDiskstats, previous?.disk, seconds, ['read', 'write'] as const);
  if (disk.error) miss(['disk_read_bytes_s', 'disk_write_bytes_s'], disk.error);
  if (disk.counters) counters.disk = disk.counters;
  if (disk.rates) Object.assign(trend, { disk_read_bytes_s: disk.rates.read, disk_write_bytes_s: disk.rates.write });

  const { disks, missing: diskMissing } = await readDiskSnapshots(root, options.dataDir, ts, options.node);
  missing.push(...diskMissing);
  const checks = pulseChecks(trend, disks, 'cores' in cpu ? cpu.cores : undefined, missing, thresholds);
  const status = worst(Object.values(checks).map((c) => c.status));
  return {
    trend,
    disks,
    pulse: { ts, node: options.node, status, checks },
    heartbeatEntry: { name: options.node, last_seen: ts, status },
    missing: missing.map((m) => m.name),
    counters,
  };
}
