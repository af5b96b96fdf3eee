import type { SeriesName, SeriesPruneResult, Store } from '../store/store.ts';
import { applyRetention } from './apply-retention.ts';

/** How often a server looks whether retention is due: a small file read when it is not (it prunes at most once an hour). */
export const RETENTION_CHECK_MS = 10 * 60 * 1000;

export interface RetentionReport {
  /** A pass that dropped records: what each series dropped. */
  pruned: (counts: Record<SeriesName, SeriesPruneResult>) => void;
  /** A pass that failed (a lock held too long, the store unreachable): the next check tries again. */
  failed: (err: unknown) => void;
}

export interface RetentionTimer {
  /** Stops the checks and waits for a pass under way. */
  stop(): Promise<void>;
}

/**
 * A server's retention (`collect.retention`, DESIGN.md 7a), so a hub that
 * only ingests prunes what it stores: applyRetention now, then every
 * RETENTION_CHECK_MS, one pass at a time; it prunes when due (at most once
 * an hour among every process sharing `dataDir`). The timer does not keep
 * the process alive.
 */
export function startRetention(store: Store, dataDir: string, retentionMs: number, report: RetentionReport): RetentionTimer {
  let pass: Promise<void> | undefined;
  let stopped = false;
  const check = () => {
    if (stopped || pass) return;
    pass = applyRetention(store, dataDir, retentionMs)
      .then(
        (counts) => {
          if (counts && Object.values(counts).some((c) => c.removed > 0)) report.pruned(counts);
        },
        (err: unknown) => report.failed(err),
      )
      .finally(() => (pass = undefined));
  };
  check();
  const timer = setInterval(check, RETENTION_CHECK_MS);
  timer.unref();
  return {
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await pass;
    },
  };
}
