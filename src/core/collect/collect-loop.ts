import { setTimeout as sleep } from 'node:timers/promises';
import { applyRetention } from '../retention/apply-retention.ts';
import type { SeriesName, SeriesPruneResult, Store } from '../store/store.ts';
import { type RecordedSample, recordSample } from './record-sample.ts';
import type { SampleOptions } from './sample-types.ts';

/** What a running collector is told to do: what `recordSample` takes, how often, and how long the series keep records. */
export interface CollectorSettings extends Omit<SampleOptions, 'previous'> {
  intervalMs: number;
  /** `collect.retention`, when set: records older than this are pruned from the store's series (applyRetention). */
  retentionMs?: number | undefined;
  /** `collect.spool_max_bytes`: the bound of the spool of a collector sending to a hub. */
  spoolMaxBytes: number;
}

export interface SamplingReport<T> {
  /** Each sample written. */
  sampled: (recorded: T) => void;
  /** A sample that failed after the first (a lock held too long, a full disk): the next one is tried. */
  failed: (err: unknown) => void;
}

export interface CollectorReport extends SamplingReport<RecordedSample> {
  /** A retention pass that dropped records: what each series dropped. */
  pruned?: (counts: Record<SeriesName, SeriesPruneResult>) => void;
}

/**
 * Runs `take` now and then every `intervalMs` until `signal` aborts. The
 * sample in progress when the signal comes is finished first, so a stop
 * never tears a line. The first sample's failure is thrown (a collector
 * that cannot write at all says so at once); a later one is reported and
 * the next one tried.
 */
export async function sampleEvery<T>(take: () => Promise<T>, intervalMs: number, signal: AbortSignal, report: SamplingReport<T>): Promise<void> {
  report.sampled(await take());
  while (!signal.aborted) {
    try {
      await sleep(intervalMs, undefined, { signal });
    } catch {
      return;
    }
    try {
      report.sampled(await take());
    } catch (err) {
      report.failed(err);
    }
  }
}

/**
 * Samples this node every `intervalMs` until `signal` aborts, each sample
 * written through the store (`recordSample`), and applies `retentionMs`
 * to the store's series after a sample when it is due (at most once an
 * hour: applyRetention). `estate collect` runs this; `estate serve
 * --collect` runs it without `retentionMs`, the server applying retention
 * itself.
 */
export async function runCollector(store: Store, settings: CollectorSettings, signal: AbortSignal, report: CollectorReport): Promise<void> {
  const { intervalMs, retentionMs, spoolMaxBytes: _, ...options } = settings;
  await sampleEvery(
    async () => {
      const recorded = await recordSample(store, options);
      await pruneIfDue(store, settings, report);
      return recorded;
    },
    intervalMs,
    signal,
    report,
  );
}

/** applyRetention with `collect.retention` set; a failure is reported, not thrown (the sample was written; a server goes on serving). */
export async function pruneIfDue(store: Store, settings: Pick<CollectorSettings, 'dataDir' | 'retentionMs'>, report: Pick<CollectorReport, 'pruned' | 'failed'>): Promise<void> {
  if (!settings.retentionMs) return;
  try {
    const counts = await applyRetention(store, settings.dataDir, settings.retentionMs);
    if (counts && Object.values(counts).some((c) => c.removed > 0)) report.pruned?.(counts);
  } catch (err) {
    report.failed(err);
  }
}
