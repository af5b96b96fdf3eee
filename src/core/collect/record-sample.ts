import type { Store } from '../store/store.ts';
import { readCounters, writeCounters } from './counters-file.ts';
import { worst } from './judge-pulse.ts';
import type { DiskSnapshot, HeartbeatEntry, PulseEntry, SampleOptions, TrendPoint } from './sample-types.ts';
import { takeSample } from './take-sample.ts';

/** What `recordSample` wrote, and what it could not. */
export interface RecordedSample {
  trend: TrendPoint;
  disks: DiskSnapshot[];
  pulse: PulseEntry;
  /** The heartbeat entry, when it was merged (undefined when the heartbeat file could not be read). */
  heartbeat?: HeartbeatEntry;
  /** Why the heartbeat was left alone, when it was. */
  heartbeatProblem?: string;
  /** The figures that could not be read. */
  missing: string[];
}

/**
 * Takes one sample of this node (takeSample) and writes it through
 * `store.series`: the heartbeat first (so that a heartbeat that cannot be
 * read is named in the pulse check `heartbeat`), then the trend point, the
 * disk snapshots and the pulse entry. The kernel counters are kept in the
 * data dir between calls (`collect/counters-<node>.json`), so a later call,
 * in this process or another, has rates.
 */
export async function recordSample(store: Store, options: Omit<SampleOptions, 'previous'>): Promise<RecordedSample> {
  const previous = await readCounters(options.dataDir, options.node);
  const sample = await takeSample({ ...options, previous });
  const merged = await store.series.mergeHeartbeat(sample.heartbeatEntry);
  const pulse = sample.pulse;
  let heartbeatProblem: string | undefined;
  if (merged.outcome === 'unreadable') {
    heartbeatProblem = merged.problem;
    pulse.checks.heartbeat = { status: 'degraded', message: merged.problem };
    pulse.status = worst(Object.values(pulse.checks).map((c) => c.status));
  }
  await store.series.appendSample({ trend: sample.trend, disks: sample.disks, pulse });
  await writeCounters(options.dataDir, options.node, sample.counters);
  return {
    trend: sample.trend,
    disks: sample.disks,
    pulse,
    ...(heartbeatProblem === undefined ? { heartbeat: sample.heartbeatEntry } : { heartbeatProblem }),
    missing: sample.missing,
  };
}
