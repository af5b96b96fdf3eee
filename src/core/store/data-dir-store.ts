import type { EstateConfig } from '../../config.ts';
import type { FacetFilter } from '../jsonl/indexed-file.ts';
import type { JsonRecord } from '../jsonl/parse-record.ts';
import { recordPages } from '../jsonl/record-pages.ts';
import { isKeyedRecord, keyedLog, restoreKeyed, writeKeyed, type KeyedLogSpec, type WriteExtra } from '../keyed-log.ts';
import { STARTS } from '../runs/run-starts.ts';
import { EVENTS } from '../events/stored-events.ts';
import { createKey, KeyCache, keyStoreHealth, listKeys, readKeys, restoreKeys, revokeKey, touchKey } from '../keys/key-store.ts';
import { dataDirTokenSecret } from '../keys/token-secret.ts';
import { ENTRIES } from '../publishing.ts';
import type { RecordLog } from '../record-log.ts';
import { createRun, deleteRun, getRun, listRuns } from '../training.ts';
import { restoreRun, scanRuns } from '../training-copy.ts';
import { type LogWatcher, watchFile } from '../watch-log.ts';
import { COMPLETIONS } from '../work.ts';
import { dataDirSeries } from '../series/data-dir-series.ts';
import { dataDirOutbox } from '../notify/data-dir-outbox.ts';
import { rollupRetentionOf } from '../rollups/rollup-retention-of.ts';
import { dataDirProbes } from '../probes/data-dir-probes.ts';
import { pruneFile } from '../retention/prune-file.ts';
import type { Credentials, KeyedRecords, RecordPage, Series, Store, StoredEvents, Tally, TallyGroup, TrainingRuns } from './store.ts';

/** How often a log with subscribers is checked even without a watcher event (network file systems). */
const POLL_MS = 5000;

/**
 * The default store: today's data dir files (DESIGN.md section 3) behind the
 * Store interface. `work/completions.jsonl` and `publishing/entries.jsonl`
 * are RecordLogs (record-log.ts), training runs one file each
 * (training.ts), keys in keys.json (key-store.ts), the token secret in
 * `token-secret` (token-secret.ts), the series through `series`
 * (data-dir-series.ts; open-store.ts may load it first, alone). Subscriptions are served by one watcher
 * per log plus a periodic check, started with the first subscriber.
 */
export function createDataDirStore(dataDir: string, config?: EstateConfig, series: Series = dataDirSeries(dataDir, rollupRetentionOf(config))): Store {
  const completions = new DataDirRecords(COMPLETIONS, keyedLog(dataDir, COMPLETIONS));
  const entries = new DataDirRecords(ENTRIES, keyedLog(dataDir, ENTRIES));
  const starts = new DataDirRecords(STARTS, keyedLog(dataDir, STARTS));
  const events = new DataDirEvents(EVENTS, keyedLog(dataDir, EVENTS));
  const tokenSecret = dataDirTokenSecret(dataDir);
  let keyCache: KeyCache | undefined;
  const credentials: Credentials = {
    create: (options) => createKey(dataDir, options),
    list: async () => listKeys(dataDir),
    revoke: (keyId, now) => revokeKey(dataDir, keyId, now),
    touch: (keyId, at) => touchKey(dataDir, keyId, at),
    lookup: async (keyId) => (keyCache ??= new KeyCache(dataDir)).get().find((k) => k.key_id === keyId),
    health: () => keyStoreHealth(dataDir),
    all: async () => readKeys(dataDir),
    restore: (records) => restoreKeys(dataDir, records),
  };
  const training: TrainingRuns = {
    create: (userId, fields, limits, now) => createRun(dataDir, userId, fields, limits, now),
    get: (userId, runId) => getRun(dataDir, userId, runId),
    list: (userId) => listRuns(dataDir, userId),
    delete: (userId, runId) => deleteRun(dataDir, userId, runId),
    pages: (pageSize) => scanRuns(dataDir, pageSize),
    restore: (run) => restoreRun(dataDir, run),
  };
  return {
    kind: 'data-dir',
    describe: () => 'data dir',
    completions,
    starts,
    events,
    entries,
    training,
    credentials,
    tokenSecret,
    series,
    probes: dataDirProbes(dataDir),
    outbox: dataDirOutbox(dataDir),
    ready: async () => {},
    health: async () => ({ credential_store: await credentials.health() }),
    close: async () => {
      await Promise.all([completions.close(), starts.close(), events.close(), entries.close()]);
    },
  };
}

class DataDirRecords implements KeyedRecords {
  readonly spec: KeyedLogSpec;
  readonly log: RecordLog;
  #subscribers = 0;
  #watcher: LogWatcher | undefined;
  #poll: NodeJS.Timeout | undefined;
  readonly #onErrors = new Set<(err: unknown) => void>();

  constructor(spec: KeyedLogSpec, log: RecordLog) {
    this.spec = spec;
    this.log = log;
  }

  write(input: object, now: () => Date, extra?: WriteExtra) {
    return writeKeyed(this.log, this.spec, input, now, extra);
  }

  byKey(values: readonly [string, string]) {
    return this.log.byKey(JSON.stringify(values));
  }

  newest(limit: number, where?: FacetFilter) {
    return this.log.newest(limit, where);
  }

  get(id: string) {
    return this.log.find(this.spec.id.field, id);
  }

  since(after: string, limit: number, where?: FacetFilter) {
    return this.log.since(after === 'start' ? 'start' : { facet: this.spec.id.field, value: after }, limit, where);
  }

  refresh() {
    return this.log.refresh();
  }

  /** The log read from its start, streamed, lines that are not records counted (recordPages). */
  pages(pageSize: number): AsyncIterable<RecordPage> {
    return recordPages(this.log.file, (record) => isKeyedRecord(this.spec, record), pageSize);
  }

  restore(records: readonly JsonRecord[]) {
    return restoreKeyed(this.log, this.spec, records);
  }

  async tally(cutoffs: readonly Date[]): Promise<Tally> {
    const t = await this.log.tally(cutoffs.map((c) => c.getTime()));
    const groups: TallyGroup[] = [];
    for (const g of t.groups) {
      const newest = t.newest.get(g.newest);
      // A group whose newest line no longer parses (the file changed under us) waits for the next call.
      if (newest) groups.push({ value: g.value, count: g.count, since: g.since, newest, distinct: g.distinct });
    }
    const earliest = t.earliest === undefined ? null : new Date(t.earliest).toISOString();
    return { count: t.count, since: t.since, earliest, skipped: t.skipped, groups };
  }

  async subscribe(listener: (records: JsonRecord[]) => void, onError?: (err: unknown) => void): Promise<() => Promise<void>> {
    const unsubscribe = this.log.subscribe(listener);
    // A closure of its own, so two subscriptions passing one function are two entries.
    const report = (err: unknown) => onError?.(err);
    this.#onErrors.add(report);
    if (this.#subscribers++ === 0) {
      const fail = (err: unknown) => this.#onErrors.forEach((f) => f(err));
      const refresh = () => void this.log.refresh().catch(fail);
      this.#watcher = watchFile(this.log.file, refresh, fail);
      this.#poll = setInterval(refresh, POLL_MS);
      this.#poll.unref();
    }
    let ended = false;
    return async () => {
      if (ended) return;
      ended = true;
      unsubscribe();
      this.#onErrors.delete(report);
      if (--this.#subscribers === 0) await this.close();
    };
  }

  async close(): Promise<void> {
    clearInterval(this.#poll);
    this.#poll = undefined;
    const watcher = this.#watcher;
    this.#watcher = undefined;
    await watcher?.close();
  }
}

/** The watched events' log, with its retention: the file rewritten as `estate prune` does, dated by `ts`. */
class DataDirEvents extends DataDirRecords implements StoredEvents {
  async prune(before: Date): Promise<number> {
    return (await pruneFile(this.log.file, before)).dropped;
  }
}
