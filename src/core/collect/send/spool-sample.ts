import { readCounters, writeCounters } from '../counters-file.ts';
import { worst } from '../judge-pulse.ts';
import type { PulseEntry, SampleCounters, SampleOptions } from '../sample-types.ts';
import { takeSample } from '../take-sample.ts';
import type { RecordedSample } from '../record-sample.ts';
import type { SampleSpool } from './sample-spool.ts';

/** What `spoolSample` wrote: the sample, and how many of the oldest unsent samples the spool's bound dropped to make room. */
export interface SpooledSample extends RecordedSample {
  dropped: number;
}

/**
 * Takes one sample of this node and appends it to the hub's spool (not the
 * series: the hub stores it, and makes its heartbeat entry). Samples the
 * spool dropped since the last one are said in this sample's pulse check
 * `collector`. The kernel counters are kept as `recordSample` keeps them.
 */
export function spoolSample(spool: SampleSpool, options: Omit<SampleOptions, 'previous'>): Promise<SpooledSample> {
  return spoolSampler(spool, options)();
}

/**
 * `spoolSample` for a collector that runs on: the kernel counters are read
 * from the data dir for the first sample only, then kept in memory from
 * one sample to the next (and still written after each, for a later run).
 */
export function spoolSampler(spool: SampleSpool, options: Omit<SampleOptions, 'previous'>): () => Promise<SpooledSample> {
  let previous: SampleCounters | undefined;
  let read = false;
  return async () => {
    if (!read) previous = await readCounters(options.dataDir, options.node);
    read = true;
    const sample = await takeSample({ ...options, previous });
    const { trend, disks, pulse } = sample;
    const { dropped } = await spool.append((unreported) => {
      if (unreported > 0) noteDrops(pulse, unreported);
      return { trend, disks, pulse };
    });
    previous = sample.counters;
    await writeCounters(options.dataDir, options.node, sample.counters);
    return { trend, disks, pulse, missing: sample.missing, dropped };
  };
}

/** Says in the pulse check `collector` (degraded) that `count` samples were dropped from a full spool. */
function noteDrops(pulse: PulseEntry, count: number): void {
  const said = `the spool was full (collect.spool_max_bytes): ${count} oldest sample${count === 1 ? '' : 's'} dropped before the hub took ${count === 1 ? 'it' : 'them'}`;
  const check = pulse.checks.collector;
  pulse.checks.collector = check ? { ...check, status: worst([check.status, 'degraded']), message: `${check.message ?? ''}${check.message ? '; ' : ''}${said}` } : { status: 'degraded', message: said };
  pulse.status = worst(Object.values(pulse.checks).map((c) => c.status));
}
