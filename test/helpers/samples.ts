// Samples as a collector sends them to a hub's POST /ingest (DESIGN.md 7a),
// for the hub's tests: every part with the sample's node and ts.

export interface TestSample {
  trend: Record<string, unknown>;
  disks: Record<string, unknown>[];
  pulse: Record<string, unknown>;
}

export interface SampleFigures {
  cpu_pct?: number;
  mem_used_pct?: number;
  load1?: number;
  status?: 'healthy' | 'degraded' | 'unhealthy';
  /** Per mount: [used_bytes, free_bytes]. */
  disks?: Record<string, [number, number]>;
}

/** One sample of `node` at `ts`. */
export function sampleOf(node: string, ts: Date | string, figures: SampleFigures = {}): TestSample {
  const at = typeof ts === 'string' ? ts : ts.toISOString();
  const disks = Object.entries(figures.disks ?? { '/': [40, 60] as [number, number] }).map(([mount, [used, free]]) => ({
    ts: at,
    node,
    mount,
    fs_type: 'ext4',
    total_bytes: used + free + 5,
    used_bytes: used,
    free_bytes: free,
  }));
  const status = figures.status ?? 'healthy';
  return {
    trend: { ts: at, node, cpu_pct: figures.cpu_pct ?? 10, load1: figures.load1 ?? 0.5, mem_total_bytes: 1000, mem_used_bytes: 400, mem_used_pct: figures.mem_used_pct ?? 40, mem_scope: 'host' },
    disks,
    pulse: { ts: at, node, status, checks: { memory: { status, value: figures.mem_used_pct ?? 40 }, load: { status: 'healthy', value: figures.load1 ?? 0.5 } } },
  };
}

/** `count` samples of `node`, one a second, the last at `last`, oldest first. */
export function samplesOf(node: string, count: number, last: Date, figures: SampleFigures = {}): TestSample[] {
  return Array.from({ length: count }, (_, i) => sampleOf(node, new Date(last.getTime() - (count - 1 - i) * 1000), figures));
}
