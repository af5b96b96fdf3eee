import { setTimeout as sleep } from 'node:timers/promises';
import type { Store } from '../store/store.ts';
import { type RecordedSample, recordSample } from './record-sample.ts';
import type { SampleOptions } from './sample-types.ts';

/** What a running collector is told to do: what `recordSample` takes, and how often. */
export interface CollectorSettings extends Omit<SampleOptions, 'previous'> {
  intervalMs: number;
}

export interface CollectorReport {
  /** Each sample written. */
  sampled: (recorded: RecordedSample) => void;
  /** A sample that failed after the first (a lock held too long, a full disk): the next one is tried. */
  failed: (err: unknown) => void;
}

/**
 * Samples this node every `intervalMs` until `signal` aborts, each sample
 * written through the store (`recordSample`). The sample in progress when
 * the signal comes is finished first, so a stop never tears a line. The
 * first sample's failure is thrown (a collector that cannot write at all
 * says so at once); a later one is reported and the next one tried.
 * `estate collect` and `estate serve --collect` both run this.
 */
export async function runCollector(store: Store, settings: CollectorSettings, signal: AbortSignal, report: CollectorReport): Promise<void> {
  const { intervalMs, ...options } = settings;
  report.sampled(await recordSample(store, options));
  while (!signal.aborted) {
    try {
      await sleep(intervalMs, undefined, { signal });
    } catch {
      return;
    }
    try {
      report.sampled(await recordSample(store, options));
    } catch (err) {
      report.failed(err);
    }
  }
}
