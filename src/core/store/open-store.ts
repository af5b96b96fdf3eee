import { EstateError } from '../../errors.ts';
import { COMPLETIONS } from '../work.ts';
import { STARTS } from '../runs/run-starts.ts';
import { EVENTS } from '../events/stored-events.ts';
import { ENTRIES } from '../publishing.ts';
import { lazySeries } from '../series/lazy-series.ts';
import { rollupRetentionOf } from '../rollups/rollup-retention-of.ts';
import type { KeyedRecords, Series, Store, StoreOptions } from './store.ts';
import { timedWrite } from '../observe.ts';

/** Whether `spec` names a PostgreSQL store (`postgres://…` or `postgresql://…`). */
export function isPostgresSpec(spec: string): boolean {
  return /^postgres(ql)?:\/\//i.test(spec);
}

/**
 * A store URL as it may be shown (errors, logs, /readyz): scheme, user, host,
 * port and database; never the password or the query (which may hold one).
 */
export function describeStoreUrl(spec: string): string {
  try {
    const url = new URL(spec);
    const user = url.username ? `${decodeURIComponent(url.username)}@` : '';
    return `${url.protocol}//${user}${url.host}${url.pathname}`;
  } catch {
    return 'postgres (an invalid URL)';
  }
}

/**
 * The store a spec names: the data dir's for none (or `data-dir`), a
 * PostgreSQL store for a `postgres://` / `postgresql://` URL. Synchronous:
 * either store's module (keys, training runs, log indexes; the PostgreSQL
 * driver) is imported at the store's first use, so commands that never touch
 * the store never load it; on the data dir, a command that reads only the
 * series (`estate trends`) loads only their part. Anything else is a `usage` error.
 */
export function openStore(spec: string | undefined, options: StoreOptions): Store {
  if (spec === undefined || spec === '' || spec === 'data-dir') {
    // The series alone load without the rest of the store: `estate trends` reads them and nothing else.
    let series: Promise<Series> | undefined;
    const loadSeries = () => (series ??= import('../series/data-dir-series.ts').then((m) => m.dataDirSeries(options.dataDir, rollupRetentionOf(options.config))));
    return lazyStore('data-dir', 'data dir', async () => loadDataDir(options, await loadSeries()), loadSeries);
  }
  if (isPostgresSpec(spec)) return lazyStore('postgres', describeStoreUrl(spec), () => loadPostgres(spec, options));
  throw new EstateError('usage', `invalid store "${spec.replace(/:[^@/]*@/, ':***@')}": use a postgres:// or postgresql:// URL, or data-dir for the data dir`);
}

async function loadDataDir(options: StoreOptions, series: Series): Promise<Store> {
  const { createDataDirStore } = await import('./data-dir-store.ts');
  return createDataDirStore(options.dataDir, options.config, series);
}

async function loadPostgres(url: string, options: StoreOptions): Promise<Store> {
  let mod: { openPostgresStore?: unknown };
  try {
    mod = (await import('./postgres-store.ts')) as { openPostgresStore?: unknown };
  } catch (err) {
    throw new EstateError('usage', `PostgreSQL store not available: ${(err as Error).message}`, { cause: err });
  }
  if (typeof mod.openPostgresStore !== 'function') throw new EstateError('usage', 'PostgreSQL store not available in this build of estate');
  return (mod.openPostgresStore as (url: string, options: StoreOptions) => Promise<Store>)(url, options);
}

/**
 * A store whose implementation loads at first use; a load that fails is
 * tried again at the next use. `loadSeries` may load the series part alone
 * (the same object the store's load gives).
 */
function lazyStore(kind: Store['kind'], description: string, load: () => Promise<Store>, loadSeries?: () => Promise<Series>): Store {
  let loading: Promise<Store> | undefined;
  const store = (): Promise<Store> => {
    loading ??= load().catch((err: unknown) => {
      loading = undefined;
      throw err;
    });
    return loading;
  };
  const seriesOf = loadSeries ?? (async () => (await store()).series);
  const records = (pick: (s: Store) => KeyedRecords, spec: KeyedRecords['spec'], kind: 'completions' | 'starts' | 'events' | 'entries'): KeyedRecords => ({
    spec,
    write: async (input, now, extra) => timedWrite(kind, 1, async () => pick(await store()).write(input, now, extra)),
    byKey: async (values) => pick(await store()).byKey(values),
    newest: async (limit, where) => pick(await store()).newest(limit, where),
    get: async (id) => pick(await store()).get(id),
    since: async (after, limit, where) => pick(await store()).since(after, limit, where),
    subscribe: async (listener, onError) => pick(await store()).subscribe(listener, onError),
    refresh: async () => pick(await store()).refresh(),
    pages: async function* (pageSize) {
      yield* pick(await store()).pages(pageSize);
    },
    restore: async (records) => pick(await store()).restore(records),
    tally: async (cutoffs) => pick(await store()).tally(cutoffs),
  });
  return {
    kind,
    describe: () => description,
    completions: records((s) => s.completions, COMPLETIONS, 'completions'),
    starts: records((s) => s.starts, STARTS, 'starts'),
    events: { ...records((s) => s.events, EVENTS, 'events'), prune: async (before) => (await store()).events.prune(before) },
    entries: records((s) => s.entries, ENTRIES, 'entries'),
    training: {
      create: async (userId, fields, limits, now) => (await store()).training.create(userId, fields, limits, now),
      get: async (userId, runId) => (await store()).training.get(userId, runId),
      list: async (userId) => (await store()).training.list(userId),
      delete: async (userId, runId) => (await store()).training.delete(userId, runId),
      pages: async function* (pageSize) {
        yield* (await store()).training.pages(pageSize);
      },
      restore: async (run) => (await store()).training.restore(run),
    },
    credentials: {
      create: async (options) => (await store()).credentials.create(options),
      list: async () => (await store()).credentials.list(),
      revoke: async (keyId, now) => (await store()).credentials.revoke(keyId, now),
      touch: async (keyId, at) => (await store()).credentials.touch(keyId, at),
      lookup: async (keyId) => (await store()).credentials.lookup(keyId),
      health: async () => (await store().catch(() => undefined))?.credentials.health() ?? 'unavailable',
      all: async () => (await store()).credentials.all(),
      restore: async (records) => (await store()).credentials.restore(records),
    },
    tokenSecret: {
      ensure: async () => (await store()).tokenSecret.ensure(),
      current: async () => (await store()).tokenSecret.current(),
      restore: async (secret) => (await store()).tokenSecret.restore(secret),
    },
    series: observedSeries(lazySeries(seriesOf)),
    probes: {
      append: (probes) => timedWrite('probes', probes.length, async () => (await store()).probes.append(probes)),
      newest: async (provider, limit) => (await store()).probes.newest(provider, limit),
      pages: async function* (pageSize) {
        yield* (await store()).probes.pages(pageSize);
      },
      restore: async (records) => (await store()).probes.restore(records),
      prune: async (before) => (await store()).probes.prune(before),
    },
    outbox: {
      targetSince: async (target, at) => (await store()).outbox.targetSince(target, at),
      targets: async () => (await store()).outbox.targets(),
      enqueue: async (deliveries) => (await store()).outbox.enqueue(deliveries),
      claim: async (owner, targets, limit, now, leaseMs) => (await store()).outbox.claim(owner, targets, limit, now, leaseMs),
      finish: async (id, owner, attempt, result) => (await store()).outbox.finish(id, owner, attempt, result),
      recent: async (limit, where) => (await store()).outbox.recent(limit, where),
      prune: async (before) => (await store()).outbox.prune(before),
      pages: async function* (pageSize) {
        yield* (await store()).outbox.pages(pageSize);
      },
      restore: async (deliveries) => (await store()).outbox.restore(deliveries),
    },
    ready: async () => (await store()).ready(),
    health: async () => {
      const loaded = await store().catch(() => undefined);
      return loaded ? loaded.health() : { store: 'unavailable', credential_store: 'skipped' };
    },
    close: async () => {
      const loaded = loading && (await loading.catch(() => undefined));
      await loaded?.close();
    },
  };
}

/** The series with their writes timed for the metrics (observe.ts): an ingest batch by its samples, a sample by its records. */
function observedSeries(series: Series): Series {
  return {
    ...series,
    ingest: (samples) => timedWrite('ingest', samples.length, () => series.ingest(samples)),
    appendSample: (sample) => timedWrite('sample', 2 + sample.disks.length, () => series.appendSample(sample)),
  };
}
