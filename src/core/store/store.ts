// INTERFACE READY
import type { EstateConfig } from '../../config.ts';
import type { DiskSnapshot, HeartbeatEntry, PulseEntry, TrendPoint } from '../collect/sample-types.ts';
import type { HeartbeatOutcome } from '../series/heartbeat-merge.ts';
import type { FacetFilter } from '../jsonl/indexed-file.ts';
import type { JsonRecord } from '../jsonl/parse-record.ts';
import type { KeyedLogSpec, KeyedWriteResult, WriteExtra } from '../keyed-log.ts';
import type { CreateKeyOptions, KeyInfo, KeyRecord } from '../keys/key-store.ts';
import type { LogPage } from '../record-log.ts';
import type { StateDocument } from '../state-files.ts';
import type { PruneCounts } from '../retention/prune-file.ts';
import type { RangeAnswer, RangeQuery, RangeSeries } from '../rollups/range-types.ts';
import type { RollupRebuild } from '../rollups/rebuild-rollups.ts';
import type { RollupFollower, RollupReport } from '../rollups/follow-rollups.ts';
import type { NewRun, TrainingLimits, TrainingRun } from '../training.ts';
import type { ProviderProbe } from '../probes/provider-probe.ts';
import type { Outbox } from '../notify/outbox-types.ts';

export type { HeartbeatOutcome };
export type { Outbox };
export type { RangeAnswer, RangeQuery, RangeSeries, RollupFollower, RollupRebuild, RollupReport };
export type { ProviderProbe };
export type { CreateKeyOptions, FacetFilter, JsonRecord, KeyedLogSpec, KeyedWriteResult, WriteExtra, KeyInfo, KeyRecord, LogPage, NewRun, TrainingLimits, TrainingRun };

// The Store boundary: everything estate itself writes and reads back (the
// keyed record logs, training runs, the credential store, the token signing
// secret) goes through one Store, which handlers receive as `ctx.store`.
// The series (trends, disk, pulse, the heartbeat) are read and written
// through `series` (DESIGN.md 7a): the collector's and the hub's writes, and
// every read of them. What only other tools write (builds, other state
// files, repos) and the config are read from the data dir.
//
// Contracts every implementation keeps (test/store-contract.test.ts runs the
// same suite against each):
// - Every method is async; none hangs: an unreachable backend fails within a
//   bounded time with EstateError 'unavailable' (503) naming the store by
//   `describe()`, never by a password or an absolute path.
// - A write that resolves is durable (data dir: fsync'd; PostgreSQL: committed).
// - Records are the JSON objects of DESIGN.md section 4, field for field.

/**
 * One kind of record written once per key (work completions: key (board,
 * task_id), facet board; published entries: key (target_site, slug), facets
 * target_site and content_type). Its `spec` says which.
 */
export interface KeyedRecords {
  readonly spec: KeyedLogSpec;
  /**
   * Stores `input`'s `spec.fields` once per key: `created` when new (durable
   * when this resolves), `replayed` when the same fields were stored before
   * (nothing written; the stored record), `conflict` when other fields were
   * (the stored record, and `differing`: the client fields whose values
   * differ). Absent and null optional fields are the same. The id is
   * `spec.id.prefix` + 16 hex digits, the time `now().toISOString()`.
   * Concurrent writers anywhere (processes, hosts) get exactly one `created` per key.
   * `extra`'s fields (given the record's time) follow the time in a new record: the
   * service's, not compared on a replay.
   */
  write(input: object, now: () => Date, extra?: WriteExtra): Promise<KeyedWriteResult>;
  /** The record stored under the key `values` (`spec.key`'s fields in order: board and task_id), if any. */
  byKey(values: readonly [string, string]): Promise<JsonRecord | undefined>;
  /**
   * The newest `limit` records, newest first (write order), all, of one
   * facet value, or of every value `where.accepts` takes (`where.facet` one
   * of `spec.facets`): the newest of those values whatever was written after
   * them. `skipped` counts stored lines passed over that are not records
   * (always 0 where none can exist).
   */
  newest(limit: number, where?: FacetFilter): Promise<LogPage>;
  /** The record whose id (`spec.id.field`) is `id`. */
  get(id: string): Promise<JsonRecord | undefined>;
  /**
   * The records written after the one with id `after` (every record, for
   * `'start'`), oldest first, the newest `limit` of them when there are more;
   * optionally filtered by a facet as `newest` is. undefined when `after` names no record.
   */
  since(after: string, limit: number, where?: FacetFilter): Promise<JsonRecord[] | undefined>;
  /**
   * Calls `listener` with each batch of records that appear, written by any
   * process or replica, in write order. Resolves once live: every record
   * written after it resolves reaches the listener (one also returned by a
   * concurrent `since` may come again: dedupe by id). Listener failures are
   * ignored; a failure of the notification machinery goes to `onError` and
   * the subscription keeps trying. The returned function ends it.
   */
  subscribe(listener: (records: JsonRecord[]) => void, onError?: (err: unknown) => void): Promise<() => Promise<void>>;
  /**
   * Catches up now: subscribers get what was written elsewhere and not yet
   * delivered (a fallback for a missed notification), and later reads start
   * warm. Concurrent calls may share one pass.
   */
  refresh(): Promise<void>;
  /**
   * Every record, oldest first (write order), a page of at most `pageSize`
   * at a time: memory is bounded by a page, whatever the log's size. Records
   * written while it runs may or may not be included. `skipped` counts the
   * stored lines of that stretch that are not records. For copying a store
   * (copy-store.ts).
   */
  pages(pageSize: number): AsyncIterable<RecordPage>;
  /**
   * Stores records made elsewhere (by another store: see copy-store.ts) with
   * their own id and time, in the given order, each once: `created` when
   * neither its key nor its id is taken (durable when this resolves),
   * `present` when a record equal to it field for field is stored under its
   * key, `conflict` when another record holds its key or its id (the stored
   * one is returned; nothing is overwritten). A record that is not one of
   * this log's (id, time and required fields as strings) is a `validation`
   * error, and nothing of the call is stored.
   */
  restore(records: readonly JsonRecord[]): Promise<RestoreResult<JsonRecord>[]>;
  /**
   * Exact counts over every record, whatever the log's size: how many in
   * all and how many whose time (`spec.time`) is at or after each cutoff;
   * with `spec.tally`, the same per value of its `by` field, with the newest
   * record of each value and the distinct values of its `distinct` field.
   * For the dashboard's aggregates. The data dir answers from its log index,
   * kept current, without reading the records again; PostgreSQL from counts
   * a trigger keeps in each write's transaction (postgres/postgres-tally.ts).
   */
  tally(cutoffs: readonly Date[]): Promise<Tally>;
}

/** The watched events' log (Store.events): keyed records, and their retention. */
export interface StoredEvents extends KeyedRecords {
  /**
   * Removes the events dated (`ts`, an ISO 8601 UTC time as estate writes it)
   * before `before`; answers how many. Data dir: the log rewritten as `estate
   * prune` does (pruneFile); PostgreSQL: a DELETE (another replica's kept
   * pages lose them at its next write).
   */
  prune(before: Date): Promise<number>;
}

/** What `KeyedRecords.tally` answers. */
export interface Tally {
  count: number;
  /** Per cutoff, in the order given. */
  since: number[];
  /** The earliest record's time (ISO 8601), or null when there is none. */
  earliest: string | null;
  /** Stored lines that are not records (0 where none can exist). */
  skipped: number;
  /** Per value of `spec.tally.by`, in no particular order; empty without `spec.tally`. */
  groups: TallyGroup[];
}

export interface TallyGroup {
  value: string;
  count: number;
  since: number[];
  newest: JsonRecord;
  /** Sorted. */
  distinct: string[];
}

/** A stretch of a record log, oldest first (KeyedRecords.pages). */
export interface RecordPage {
  records: JsonRecord[];
  /** Stored lines of this stretch that are not records (always 0 where none can exist). */
  skipped: number;
}

/**
 * What a `restore` did with one record: `created` (stored now), `present`
 * (stored before, equal), `conflict` (another record holds its identity).
 * `stored` is the record the store now holds under that identity.
 */
export interface RestoreResult<T> {
  outcome: 'created' | 'present' | 'conflict';
  stored: T;
}

/** A page of TrainingRuns.pages: the runs, and how many stored runs were not readable as runs (a corrupt file, a link, another run's file). */
export interface RunPage {
  runs: TrainingRun[];
  skipped: number;
}

/**
 * Training runs, per user: a run of another user is answered exactly as a
 * run that does not exist. Run ids are `run_` + 16 hex digits.
 */
export interface TrainingRuns {
  /**
   * Creates a queued run owned by `userId`. Refuses params over
   * `limits.maxParamsBytes` (`payload_too_large`) and a run past
   * `limits.maxRunsPerUser` (`validation`, loc ["body"], type `quota_exceeded`),
   * also against concurrent creators elsewhere.
   */
  create(userId: string, fields: NewRun, limits: TrainingLimits, now: Date): Promise<TrainingRun>;
  /** The run, if it exists and belongs to `userId`; any string is accepted as `runId`. */
  get(userId: string, runId: string): Promise<TrainingRun | undefined>;
  /** The runs of `userId`, newest first (created_at, then run_id, descending). */
  list(userId: string): Promise<TrainingRun[]>;
  /** Deletes the run if it exists and belongs to `userId`; false otherwise. */
  delete(userId: string, runId: string): Promise<boolean>;
  /** Every run of every user, a page of at most `pageSize` at a time, in no particular order; what is stored as a run but is not one is counted, not returned. */
  pages(pageSize: number): AsyncIterable<RunPage>;
  /**
   * Stores a run made elsewhere as it is (run_id, owner, times), whatever
   * the quota: `created`, `present` (an equal run is stored) or `conflict`
   * (another run, or something unreadable, holds its run_id; nothing is
   * overwritten). A run that is not one is a `validation` error.
   */
  restore(run: TrainingRun): Promise<RestoreResult<TrainingRun | undefined>>;
}

/**
 * The credential store: API keys (only their SHA-256 hashes), their scopes,
 * expiry, revocation and last use. Build records with `newKey` (key-store.ts)
 * so every store validates and formats them alike.
 */
export interface Credentials {
  /** Creates a key; returns it with its secret, the only time the secret exists outside the caller. */
  create(options: CreateKeyOptions): Promise<{ info: KeyInfo; key: string }>;
  /** Every key, without hashes, in creation order. An unreadable store is `unavailable`. */
  list(): Promise<KeyInfo[]>;
  /** Marks a key revoked (keeps the first revocation time); undefined when there is no such key. */
  revoke(keyId: string, now: Date): Promise<KeyInfo | undefined>;
  /** Records a use at `at` unless a later one is recorded; a missing key is left alone; never undoes a revocation. */
  touch(keyId: string, at: Date): Promise<void>;
  /**
   * The key record with id `keyId`, for authentication, from a cache: a key
   * created or revoked by any process or replica is seen within 3 s (data
   * dir: on the next call after the file changes, 1 s at worst). A store that
   * cannot be read is `unavailable` (a presented key may be genuine).
   */
  lookup(keyId: string): Promise<KeyRecord | undefined>;
  /** For readiness: `ok`, `corrupt`, or a short error code. Never throws. */
  health(): Promise<string>;
  /** Every key record, hashes included, in creation order (for copying a store). */
  all(): Promise<KeyRecord[]>;
  /**
   * Stores key records made elsewhere as they are (key_id, hash, times:
   * a key keeps working), in the given order: `created` when the key_id is
   * new, else `present` when the stored key is the same key (user, name,
   * hash, scopes, creation and expiry; its revocation and last use may
   * differ: see copy-store.ts), else `conflict` (nothing is overwritten).
   * A record that is not one is a `validation` error, and nothing is stored.
   */
  restore(records: readonly KeyRecord[]): Promise<RestoreResult<KeyRecord>[]>;
}

/** The key that signs and checks bearer tokens (32 bytes); replacing or removing it invalidates every token. */
export interface TokenSecret {
  /** The secret, created on first use; concurrent first uses anywhere agree on one. */
  ensure(): Promise<Uint8Array>;
  /** The secret as a verifier sees it (cached; a change is seen within 3 s), or undefined when none was ever made. */
  current(): Promise<Uint8Array | undefined>;
  /**
   * Makes `secret` (32 bytes, from another store) the secret, unless there
   * is one: `created`, `present` (the same one) or `conflict` (another one,
   * kept: replacing it would invalidate the tokens it signed).
   */
  restore(secret: Uint8Array): Promise<RestoreResult<Uint8Array>>;
}

/** What one sample of a node appends to the series (DESIGN.md 7a): every part has the sample's `node` and `ts`. */
export interface SeriesSample {
  trend: TrendPoint;
  disks: readonly DiskSnapshot[];
  pulse: PulseEntry;
}

/** The series logs a Store keeps: trend points, disk snapshots, pulse entries. */
export type SeriesName = 'trends' | 'disk' | 'pulse';

/** Which records of a series a read wants: one node's (`node`), one mount's (`mount`, disk only), or both. */
export interface SeriesFilter {
  node?: string;
  mount?: string;
}

/** A page of a series, newest first (the answer shape of `/trends`, `/disk`, `/health/pulse`). */
export interface SeriesPage {
  items: JsonRecord[];
  count: number;
  limit: number;
  /** Stored lines passed over for this page because they are not records of the series (0 where none can exist). */
  skipped_lines: number;
}

/** What `Series.ingest` did: samples stored now, and samples already stored before (known by node and ts). */
export interface IngestResult {
  stored: number;
  duplicates: number;
}

/** What `Series.prune` did (or, with `dryRun`, would do). */
export interface SeriesPruneResult {
  /** Records dated before the cutoff: removed (with `dryRun`, that would be). */
  removed: number;
  /** Data dir only: how its file changed (lines kept, undated ones among them, bytes before and after). */
  file?: PruneCounts;
}

/**
 * The series (DESIGN.md 7a): trend points, disk snapshots, pulse entries and
 * the heartbeat. Data dir: `trends.jsonl`, `disk.jsonl`, `health-pulse.jsonl`
 * and `state/heartbeat.json`, files other tools may write too (per-node
 * reads through an index with a `node` facet). PostgreSQL: tables of its own.
 */
export interface Series {
  /**
   * Appends the sample's trend point, disk snapshots and pulse entry, each
   * log with one durable write under its writer lock (`<file>.lock`, the
   * lock `estate prune` takes): one complete line per record. This node's
   * own collector: no check for duplicates (its `ts` is new).
   */
  appendSample(sample: SeriesSample): Promise<void>;
  /**
   * Stores samples sent to a hub (`POST /ingest`), each once: a sample is
   * known by its node and `ts` (a trend point by (node, ts), a disk
   * snapshot by (node, ts, mount), a pulse entry by (node, ts)), so one sent
   * again after a lost answer, or re-batched from a spool, is a `duplicate`
   * and nothing of it is written twice, also against concurrent hubs on one
   * store. Durable when this resolves. Samples are stored in the given order.
   * Then each node's heartbeat entry becomes its newest sample's (`name`
   * node, `last_seen` ts, `status` the pulse's), as `mergeHeartbeat` does,
   * unless the stored entry is newer.
   */
  ingest(samples: readonly SeriesSample[]): Promise<IngestResult>;
  /**
   * Makes `entry` its node's entry in the heartbeat, atomically, under the
   * file's lock; every other entry and unknown field is kept. A heartbeat
   * that cannot be read as one (not valid JSON) is never overwritten: the
   * answer is `unreadable`, with the reason.
   */
  mergeHeartbeat(entry: HeartbeatEntry): Promise<HeartbeatOutcome>;
  /**
   * The heartbeat as stored (any JSON; `{"nodes": [...]}` by DESIGN.md
   * section 3), described as `readStateDocument` describes a state file:
   * missing, not valid JSON or too large is said in the answer, never thrown.
   * `/events`, `/state/heartbeat` and `/nodes` read it here.
   */
  heartbeat(): Promise<StateDocument>;
  /**
   * The newest `limit` records of a series, newest first, of every node
   * (merged newest first: write order) or only of `where.node` (and, for
   * disk, `where.mount`). Cost proportional to the answer, not to the
   * number of records or nodes: a per-node read never scans other nodes'
   * records once the store's index is warm.
   */
  newest(series: SeriesName, limit: number, where?: SeriesFilter): Promise<SeriesPage>;
  /** The nodes that have records in any series (from the index: no scan of the records), sorted. */
  nodes(): Promise<string[]>;
  /** Every record of a series, oldest first, a page of at most `pageSize` at a time (for `estate store copy`). */
  pages(series: SeriesName, pageSize: number): AsyncIterable<RecordPage>;
  /** Stores records of a series made elsewhere (store copy), each once by its key as `ingest` knows them (a record without `node` or `ts`: once by its content, the text JSON.stringify gives it); answers how many were new. */
  restore(series: SeriesName, records: readonly JsonRecord[]): Promise<{ created: number; present: number }>;
  /** Makes `data` (a parsed heartbeat) the heartbeat unless one is stored (store copy): `created`, `present` (an equal one) or `conflict` (another one, kept). */
  restoreHeartbeat(data: unknown): Promise<'created' | 'present' | 'conflict'>;
  /**
   * Retention (DESIGN.md 7a): removes the records of `series` dated before
   * `before` (their `ts`); a record that cannot be dated is kept. Records
   * written meanwhile are kept; readers never see a partial series. Data
   * dir: the log is rewritten as `estate prune` does (pruneFile: renamed under
   * its lock, atomically; dated as Date.parse reads `ts`). PostgreSQL: the rows
   * whose `ts` is an RFC 3339 date-time before the cutoff (what collectors and
   * the hub write; any other `ts` is undated) are deleted in batches through
   * an index on that time, and a node left with no record in any series
   * leaves `nodes()`, as on the data dir. Concurrent prunes of one series
   * anywhere are safe and cheap: one removes at a time (data dir: the others
   * find the log replaced when they take its lock, read the new one and drop
   * nothing; PostgreSQL:
   * the others stop, the one at work deleting the rest), and each record
   * removed is counted by one of them. With `dryRun`, counts and changes nothing.
   */
  prune(series: SeriesName, before: Date, options?: { dryRun?: boolean }): Promise<SeriesPruneResult>;
  /**
   * A series over a range (DESIGN.md 7b): per bucket of the step
   * (rangeStep: at most `query.points`, aligned to the epoch, oldest first,
   * empty ones left out) the count, min, mean and max of each numeric field
   * (or of `query.fields`), of every node's records or of `query.node`'s
   * (disk: and `query.mount`'s), from the tier chooseTier picks: the raw
   * records in `[fromMs, toMs)` (never reading records outside the range's
   * stretch of the series), or the 1m / 1h rollups kept beside it, with
   * their own retention (config `rollups.retention`), which also answer a
   * range the raw series no longer holds. Both stores answer alike.
   */
  range(series: RangeSeries, query: RangeQuery): Promise<RangeAnswer>;
  /**
   * `estate rollups rebuild`: the rollups of `series` computed again from
   * every raw record, the buckets older than the oldest raw record (what
   * only the rollups hold) kept; their retention applied.
   */
  rebuildRollups(series: RangeSeries): Promise<RollupRebuild>;
  /**
   * What `estate serve` runs: the rollups built where missing, in the
   * background, and kept current as records arrive, whoever writes them
   * (data dir: a watcher on each raw log and a periodic look; PostgreSQL:
   * a trigger does it in each insert's transaction, so this only applies
   * the retention, hourly). `stop()` ends it.
   */
  followRollups(report: RollupReport): Promise<RollupFollower>;
}

/**
 * The probes `estate serve` makes of the configured providers (config
 * `providers`, every `providers_probe_s`), from which `provider_down` and
 * `provider_recovered` are derived (DESIGN.md 7c): the state of each
 * provider's condition is these stored probes, so every replica and a
 * server after a restart derive the same events. Data dir:
 * `providers/probes.jsonl`; PostgreSQL: table `provider_probes` (migration 7).
 */
export interface ProviderProbes {
  /** Stores the probes, each once by (provider, ts), in the given order; durable when this resolves. */
  append(probes: readonly ProviderProbe[]): Promise<void>;
  /** The newest `limit` probes of `provider`, newest first (write order), without reading other providers' probes. */
  newest(provider: string, limit: number): Promise<JsonRecord[]>;
  /** Every probe, oldest first, a page of at most `pageSize` at a time (for `estate store copy`). */
  pages(pageSize: number): AsyncIterable<RecordPage>;
  /** Stores probes made elsewhere (store copy), each once by (provider, ts); records that are not probes are left out. How many were new and how many were there. */
  restore(records: readonly JsonRecord[]): Promise<{ created: number; present: number }>;
  /** Removes the probes dated (`ts`) before `before`; answers how many. Data dir: the log rewritten as `estate prune` does (pruneFile); PostgreSQL: a DELETE. */
  prune(before: Date): Promise<number>;
}

export type StoreKind = 'data-dir' | 'postgres';

export interface Store {
  readonly kind: StoreKind;
  /** Names the store for errors, logs and /readyz: `data dir`, `postgres://host:5432/db`; never a password or an absolute path. */
  describe(): string;
  completions: KeyedRecords;
  /** The starts of runs (DESIGN.md 7c): key (board, task_id), as completions. */
  starts: KeyedRecords;
  /**
   * The watched events (DESIGN.md 3, 7c: events/stored-events.ts), stored when
   * they happen, once per (kind, subject, ts) whichever replica noticed them
   * first: what /events merges with the derived ones and the webhooks are sent from.
   */
  events: StoredEvents;
  entries: KeyedRecords;
  training: TrainingRuns;
  credentials: Credentials;
  tokenSecret: TokenSecret;
  series: Series;
  probes: ProviderProbes;
  /**
   * The webhook outbox (docs/notify.md): deliveries of events to the
   * config's `notify` targets, each stored once by its webhook-id, leased to
   * one dispatcher at a time. Data dir: `notify/outbox.json`
   * (notify/data-dir-outbox.ts); PostgreSQL: `notify_deliveries`,
   * `notify_targets` (postgres/postgres-outbox.ts).
   */
  outbox: Outbox;
  /**
   * Checks that the store can be used now (PostgreSQL: reachable, schema at
   * the version this build needs); throws EstateError 'unavailable' (or
   * 'usage' for a schema that needs `estate migrate` / a newer estate) saying
   * what is wrong. A server calls it before listening.
   */
  ready(): Promise<void>;
  /**
   * Named checks for /readyz, each `ok` or a short code (never a path or a
   * password); never throws, answers within a bounded time. Data dir:
   * `{ credential_store }`; PostgreSQL: `{ store, credential_store }`.
   */
  health(): Promise<Record<string, string>>;
  /** Stops watchers, listeners and connections; waits for background writes. */
  close(): Promise<void>;
}

/** What a store is opened with. `env` is the environment as config.ts reads it (PGPASSWORD, PGPASSFILE…). */
export interface StoreOptions {
  dataDir: string;
  config: EstateConfig;
  env: NodeJS.ProcessEnv;
}

/**
 * What `src/core/store/postgres-store.ts` exports (loaded only for a
 * `postgres://` or `postgresql://` spec): `openPostgresStore(url, options)`.
 * It may connect lazily; `ready()` is where a bad URL or server shows.
 */
export type OpenPostgresStore = (url: string, options: StoreOptions) => Promise<Store>;
