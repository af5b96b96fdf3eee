import type { Series } from './store/store.ts';

export const PULSE_STATUSES = ['healthy', 'degraded', 'unhealthy'] as const;
export type PulseStatus = (typeof PULSE_STATUSES)[number] | 'unknown';

/** The status of the newest pulse entry (of `node`, when given); `unknown` when there is none or it names no known status. */
export async function pulseStatus(series: Pick<Series, 'newest'>, node?: string): Promise<PulseStatus> {
  const [latest] = (await series.newest('pulse', 1, { node })).items;
  return statusOf(latest?.status);
}

/** `status` when it is one of PULSE_STATUSES, else `unknown`. */
export function statusOf(status: unknown): PulseStatus {
  return (PULSE_STATUSES as readonly unknown[]).includes(status) ? (status as PulseStatus) : 'unknown';
}
