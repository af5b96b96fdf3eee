import { diskUsedPct } from '../disk-usage.ts';
import type { CheckStatus, DiskSnapshot, PulseCheck, Threshold, Thresholds, TrendPoint } from './sample-types.ts';

const RANK: Record<CheckStatus, number> = { healthy: 0, degraded: 1, unhealthy: 2 };

/** The status of `value` against a threshold: at or above `unhealthy` is unhealthy, at or above `degraded` degraded. */
export function judge(value: number, threshold: Threshold): CheckStatus {
  if (value >= threshold.unhealthy) return 'unhealthy';
  if (value >= threshold.degraded) return 'degraded';
  return 'healthy';
}

export function worst(statuses: CheckStatus[]): CheckStatus {
  return statuses.reduce<CheckStatus>((a, b) => (RANK[b] > RANK[a] ? b : a), 'healthy');
}

/**
 * The pulse checks of one sample: `disk:<mount>` per snapshot, `memory`,
 * `load` (load1 per core) and, when figures could not be read,
 * `collector` naming them (degraded). A check whose figure is missing is
 * degraded and says so.
 */
export function pulseChecks(
  trend: TrendPoint,
  disks: DiskSnapshot[],
  cores: number | undefined,
  missing: { name: string; reason: string }[],
  thresholds: Thresholds,
): Record<string, PulseCheck> {
  const checks: Record<string, PulseCheck> = {};
  for (const d of disks) {
    const pct = diskUsedPct(d);
    checks[`disk:${d.mount}`] = { status: judge(pct, thresholds.disk_used_pct), value: pct };
  }
  checks.memory =
    trend.mem_used_pct === undefined
      ? { status: 'degraded', message: 'memory could not be read' }
      : { status: judge(trend.mem_used_pct, thresholds.mem_used_pct), value: trend.mem_used_pct };
  if (trend.load1 === undefined || !cores) checks.load = { status: 'degraded', message: 'load per core could not be read' };
  else {
    const perCore = Math.round((trend.load1 / cores) * 100) / 100;
    checks.load = { status: judge(perCore, thresholds.load_per_core), value: perCore };
  }
  if (missing.length > 0) {
    checks.collector = {
      status: 'degraded',
      value: missing.map((m) => m.name),
      message: `not read: ${missing.map((m) => `${m.name} (${m.reason})`).join('; ')}`,
    };
  }
  return checks;
}
