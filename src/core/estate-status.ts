import { VERSION } from '../version.ts';
import { nodeRuntime, type NodeRuntime } from './node-runtime.ts';
import { pulseStatus, type PulseStatus } from './pulse.ts';
import { settle } from './section.ts';
import type { KeyedRecords, Series } from './store/store.ts';

export interface EstateStatus {
  node: string;
  /** `degraded` when the newest health pulse is degraded or unhealthy, or cannot be read. */
  status: 'ok' | 'degraded';
  pulse: PulseStatus;
  version: string;
  started_at: string;
  uptime_s: number;
  last_activity: string | null;
  runtime: NodeRuntime;
  /** Why part of this answer is missing (the pulse or the completion feed could not be read). */
  errors: string[];
}

/** The estate node card: this node's status, uptime and runtime, and when an agent last completed a task. */
export async function estateStatus(ctx: {
  series: Pick<Series, 'newest'>;
  completions: Pick<KeyedRecords, 'newest'>;
  nodeName: string;
  startedAt: Date;
  now: Date;
}): Promise<EstateStatus> {
  const [pulse, last] = await Promise.all([
    settle('health-pulse.jsonl', () => pulseStatus(ctx.series)),
    settle('work/completions.jsonl', async () => (await ctx.completions.newest(1)).records[0]),
  ]);
  const status = pulse.value ?? 'unknown';
  const completedAt = last.value?.completed_at;
  return {
    node: ctx.nodeName,
    status: pulse.error || status === 'degraded' || status === 'unhealthy' ? 'degraded' : 'ok',
    pulse: status,
    version: VERSION,
    started_at: ctx.startedAt.toISOString(),
    uptime_s: Math.max(0, Math.round((ctx.now.getTime() - ctx.startedAt.getTime()) / 1000)),
    last_activity: typeof completedAt === 'string' ? completedAt : null,
    runtime: nodeRuntime(),
    errors: [pulse.error, last.error].filter((e): e is string => e !== null),
  };
}
