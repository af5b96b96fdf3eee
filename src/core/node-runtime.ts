import os from 'node:os';

/** Live telemetry of the machine this estate process runs on. */
export interface NodeRuntime {
  hostname: string;
  platform: string;
  arch: string;
  node_version: string;
  cpus: number;
  /** 1, 5 and 15 minute load averages (zeros where the platform has none). */
  load_avg: [number, number, number];
  memory: { total_bytes: number; free_bytes: number; used_pct: number };
  host_uptime_s: number;
}

export function nodeRuntime(): NodeRuntime {
  const [one = 0, five = 0, fifteen = 0] = os.loadavg();
  const total = os.totalmem();
  const free = os.freemem();
  return {
    hostname: os.hostname(),
    platform: os.platform(),
    arch: os.arch(),
    node_version: process.version,
    cpus: os.availableParallelism(),
    load_avg: [round(one, 2), round(five, 2), round(fifteen, 2)],
    memory: { total_bytes: total, free_bytes: free, used_pct: total > 0 ? round(((total - free) / total) * 100, 1) : 0 },
    host_uptime_s: Math.round(os.uptime()),
  };
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
