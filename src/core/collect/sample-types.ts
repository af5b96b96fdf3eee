// The shapes of one sample of a node (DESIGN.md section 7a), and what a
// sample needs from its caller. Pure data: no I/O here.

export type CheckStatus = 'healthy' | 'degraded' | 'unhealthy';

export interface TrendPoint {
  ts: string;
  node: string;
  cpu_pct?: number;
  load1?: number;
  load5?: number;
  load15?: number;
  mem_total_bytes?: number;
  mem_used_bytes?: number;
  mem_used_pct?: number;
  mem_scope?: 'host' | 'cgroup';
  swap_used_bytes?: number;
  uptime_s?: number;
  net_rx_bytes_s?: number;
  net_tx_bytes_s?: number;
  disk_read_bytes_s?: number;
  disk_write_bytes_s?: number;
}

export interface DiskSnapshot {
  ts: string;
  node: string;
  mount: string;
  fs_type: string;
  total_bytes: number;
  used_bytes: number;
  free_bytes: number;
}

export interface PulseCheck {
  status: CheckStatus;
  value?: number | string[];
  message?: string;
}

export interface PulseEntry {
  ts: string;
  node: string;
  status: CheckStatus;
  checks: Record<string, PulseCheck>;
}

export interface HeartbeatEntry {
  name: string;
  last_seen: string;
  status: CheckStatus;
}

/** Cumulative kernel counters, kept between samples so the next one can compute rates. JSON-safe. */
export interface SampleCounters {
  /** When they were read, ms since the epoch. */
  ts_ms: number;
  cpu?: CpuTimes;
  /** Bytes received and sent per physical interface. */
  net?: Record<string, { rx: number; tx: number }>;
  /** Bytes read and written per whole physical disk. */
  disk?: Record<string, { read: number; write: number }>;
}

export interface CpuTimes {
  busy: number;
  total: number;
}

export interface Threshold {
  degraded: number;
  unhealthy: number;
}

export interface Thresholds {
  disk_used_pct: Threshold;
  mem_used_pct: Threshold;
  load_per_core: Threshold;
}

export const DEFAULT_THRESHOLDS: Thresholds = {
  disk_used_pct: { degraded: 85, unhealthy: 95 },
  mem_used_pct: { degraded: 90, unhealthy: 97 },
  load_per_core: { degraded: 2, unhealthy: 4 },
};

export interface SampleOptions {
  node: string;
  /** `/`, or the directory where the host's root is mounted (`--host-prefix`). */
  root?: string;
  /** Where the cgroup file system is mounted; read only when `root` is `/`. Default `/sys/fs/cgroup`. */
  cgroupRoot?: string;
  /** The counters the previous sample returned: rates are computed from them. */
  previous?: SampleCounters;
  thresholds?: Thresholds;
  /** The data dir: its file system is always among the disk snapshots. */
  dataDir: string;
  /** The sample's time (default: when the figures are read). */
  now?: Date;
  /** How long to watch /proc/stat when there are no previous CPU counters. Default 250 ms. */
  cpuWindowMs?: number;
}

export interface Sample {
  trend: TrendPoint;
  disks: DiskSnapshot[];
  pulse: PulseEntry;
  heartbeatEntry: HeartbeatEntry;
  /** The figures that could not be read (left out of the sample, named in the pulse check `collector`). */
  missing: string[];
  /** Pass as `previous` to the next sample. */
  counters: SampleCounters;
}
