import { latestRecord } from './recent-records.ts';

export const PULSE_STATUSES = ['healthy', 'degraded', 'unhealthy'] as const;
export type PulseStatus = (typeof PULSE_STATUSES)[number] | 'unknown';

/** The status of the newest pulse entry; `unknown` when there is none or it names no known status. */
export async function pulseStatus(dataDir: string): Promise<PulseStatus> {
  const latest = await latestRecord(dataDir, 'pulse');
  const status = latest?.status;
  return (PULSE_STATUSES as readonly unknown[]).includes(status) ? (status as PulseStatus) : 'unknown';
}
