import { dataPath } from '../data-files.ts';
import { watchFile, type LogWatcher } from '../watch-log.ts';
import { catchUpRollups } from './catch-up-rollups.ts';
import type { RangeSeries, RollupRetention } from './range-types.ts';

/** How often the rollups look at the raw logs besides their watchers (file systems where watchers miss changes). */
const CHECK_MS = 5_000;
/**
 * The least time from one pass's start to the next. A hub's logs change
 * dozens of times a second, and a pass per change (the rollups' lock, the
 * state read and rewritten) took a tenth of its thread: a hub's batch p99
 * 144-158 ms against 103-117 ms at this gap (bench/hub-ingest.mjs, four
 * runs each). Longer gaps fold more at once and hold requests up longer
 * (1 s: p90 over 100 ms). A read folds in the raw lines past the rollups'
 * state itself (data-dir-range.ts), so a pass that waits changes no answer.
 */
const MIN_GAP_MS = 250;

export interface RollupReport {
  /** A pass that folded records in (a first build: all of them). */
  folded: (series: RangeSeries, records: number) => void;
  /** A pass that failed (the lock held too long, a disk full): the next change or check tries again. */
  failed: (series: RangeSeries, err: unknown) => void;
}

export interface RollupFollower {
  /** Resolves once every series has been caught up once since the start (a first build done). */
  readonly ready: Promise<void>;
  /** Stops watching and waits for a pass under way. */
  stop(): Promise<void>;
}

/**
 * The server's rollups on the data dir (DESIGN.md 7b): each series' rollups
 * built (what is missing) in the background at once, then caught up
 * whenever its raw log changes, whoever wrote it (a watcher on the log, and
 * a look every CHECK_MS), one pass at a time per series and at most one
 * every MIN_GAP_MS; the retention is applied within those passes, at most
 * once an hour.
 */
export function followRollups(dataDir: string, series: readonly RangeSeries[], retention: RollupRetention, report: RollupReport): RollupFollower {
  let stopped = false;
  const watchers: LogWatcher[] = [];
  const passes = new Set<Promise<void>>();
  const firsts: Promise<void>[] = [];
  const timers: NodeJS.Timeout[] = [];
  const stops: (() => void)[] = [];
  for (const name of series) {
    let running: Promise<void> | undefined;
    let again = false;
    let lastStart = Number.NEGATIVE_INFINITY;
    let later: NodeJS.Timeout | undefined;
    const pass = (): Promise<void> => {
      if (stopped) return Promise.resolve();
      if (running) {
        again = true;
        return running;
      }
      const wait = lastStart + MIN_GAP_MS - Date.now();
      if (wait > 0) {
        later ??= setTimeout(() => {
          later = undefined;
          void pass();
        }, wait).unref();
        return Promise.resolve();
      }
      lastStart = Date.now();
      const current = catchUpRollups(dataDir, name, retention)
        .then(
          (outcome) => {
            if (outcome.folded > 0) report.folded(name, outcome.folded);
          },
          (err: unknown) => report.failed(name, err),
        )
        .finally(() => {
          running = undefined;
          if (again && !stopped) {
            again = false;
            void pass();
          }
        });
      running = current;
      passes.add(current);
      void current.then(() => passes.delete(current));
      return current;
    };
    firsts.push(pass());
    watchers.push(watchFile(dataPath(dataDir, name), () => void pass(), () => {}, { persistent: false }));
    const timer = setInterval(() => void pass(), CHECK_MS);
    timer.unref();
    timers.push(timer);
    stops.push(() => clearTimeout(later));
  }
  return {
    ready: Promise.all(firsts).then(() => {}),
    async stop() {
      stopped = true;
      for (const timer of timers) clearInterval(timer);
      for (const stopLater of stops) stopLater();
      await Promise.all(watchers.map((w) => w.close()));
      await Promise.all([...passes]);
    },
  };
}
