import type { Series } from '../store/store.ts';

/**
 * A Series whose every method waits for `load()` and calls the one it gives:
 * for parts loaded at their first use (open-store.ts, data-dir-series.ts).
 * `load` is called at each call: make it remember its promise.
 */
export function lazySeries(load: () => Promise<Series>): Series {
  return {
    appendSample: async (sample) => (await load()).appendSample(sample),
    mergeHeartbeat: async (entry) => (await load()).mergeHeartbeat(entry),
    ingest: async (samples) => (await load()).ingest(samples),
    heartbeat: async () => (await load()).heartbeat(),
    newest: async (series, limit, where) => (await load()).newest(series, limit, where),
    nodes: async () => (await load()).nodes(),
    pages: async function* (series, pageSize) {
      yield* (await load()).pages(series, pageSize);
    },
    restore: async (series, records) => (await load()).restore(series, records),
    restoreHeartbeat: async (data) => (await load()).restoreHeartbeat(data),
    prune: async (series, before, options) => (await load()).prune(series, before, options),
    range: async (series, query) => (await load()).range(series, query),
    rebuildRollups: async (series) => (await load()).rebuildRollups(series),
    followRollups: async (report) => (await load()).followRollups(report),
  };
}
