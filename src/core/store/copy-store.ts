import { recordDifferences, type KeyedLogSpec } from '../keyed-log.ts';
import { keyDifferences, type KeyRecord } from '../keys/key-store.ts';
import type { JsonRecord, KeyedRecords, RestoreResult, SeriesName, Store } from './store.ts';

// Copying everything estate writes from one store to another (`estate store
// copy`), so an operator can move an estate between the data dir and
// PostgreSQL (either way, or between two of either) without losing a record.
//
// - Records keep their ids, times and order; keys keep their ids and hashes
//   (existing keys keep working); the token secret is copied (existing tokens
//   keep verifying).
// - Idempotent: what the destination holds already, equal, is counted as
//   `already_there`; a record whose id or key holds something else there is a
//   conflict: reported, never overwritten, and the copy goes on.
// - A key's revocation and last use only ever move forward: a key revoked (or
//   used later) at the source since an earlier copy is revoked (or touched) at
//   the destination too, counted as `updated`; the destination's own
//   revocations and uses stay.
// - Memory is bounded by a page: the logs are read and written a page at a time.
// - Nothing is deleted at the destination: a record deleted at the source
//   after an earlier copy stays where it was copied to.
// - The series (trend points, disk snapshots, pulse entries) are copied
//   oldest first, each record once by its identity (node and ts; disk: and
//   mount; records without them, once by their content): what is there
//   already is `already_there`. The heartbeat is copied when the destination
//   has none; another one there is a conflict, kept.
// - The provider probes (provider_down / provider_recovered are derived from
//   them) are copied oldest first, each once by (provider, ts).
// - The watched events (events/stored-events.ts) are keyed records as the
//   completions are: each once by its kind, subject and time.
// - The webhook outbox (docs/notify.md): each delivery once by its
//   webhook-id, with its status and attempts (a lease is not carried: the
//   destination's dispatcher claims what is pending), and each target's
//   start when the destination has none, so a server on the destination
//   neither sends an event twice nor starts its targets afresh.

export const COPY_KINDS = ['completions', 'starts', 'events', 'entries', 'training_runs', 'api_keys', 'token_secret', 'trends', 'disk', 'pulse', 'heartbeat', 'provider_probes', 'notify_outbox'] as const;
export type CopyKind = (typeof COPY_KINDS)[number];

export interface KindCounts {
  /** Stored at the destination by this copy. */
  copied: number;
  /** At the destination already, equal. */
  already_there: number;
  /** API keys whose revocation or last use was carried over (see above). */
  updated: number;
  /** Something else holds its id or key at the destination: left as it is. */
  conflicts: number;
  /** What the source holds that is not a record (a corrupt or torn line, a run file that is not a run, a heartbeat that is not valid JSON): not copied. */
  skipped: number;
}

/** One conflict: the kind, the id of the source's record, its key (keyed records), and the fields that differ (names only, never values). */
export interface CopyConflict {
  kind: CopyKind;
  id: string;
  key?: Record<string, string>;
  differing: string[];
}

export type CopyReport = Record<CopyKind, KindCounts> & {
  /** The first LISTED_CONFLICTS conflicts (the counts have them all). */
  conflicts: CopyConflict[];
};

export interface CopyOptions {
  /** Records read and written at a time (default 1000). */
  pageSize?: number;
  /** Called with each conflict as it is found. */
  onConflict?: (conflict: CopyConflict) => void;
}

/** Conflicts kept in the report; the counts have every one. */
export const LISTED_CONFLICTS = 100;
const DEFAULT_PAGE = 1000;
/** Training runs read at a time (each is restored on its own). */
const RUN_PAGE = 100;

/**
 * Copies everything `from` holds into `to` (see above); both are checked
 * ready first (a PostgreSQL store must be migrated). Resolves with what was
 * done per kind; conflicts do not stop it. A store that fails mid-way
 * rejects: what was copied stays, and a second run copies the rest.
 *
 * @example
 *   const report = await copyStore(dataDirStore, postgresStore);
 *   report.completions.copied; // 1234
 */
export async function copyStore(from: Store, to: Store, options: CopyOptions = {}): Promise<CopyReport> {
  const pageSize = options.pageSize ?? DEFAULT_PAGE;
  await from.ready();
  await to.ready();
  const report: CopyReport = {
    ...(Object.fromEntries(COPY_KINDS.map((k) => [k, { copied: 0, already_there: 0, updated: 0, conflicts: 0, skipped: 0 }])) as Record<CopyKind, KindCounts>),
    conflicts: [],
  };
  const conflict = (c: CopyConflict) => {
    report[c.kind].conflicts++;
    if (report.conflicts.length < LISTED_CONFLICTS) report.conflicts.push(c);
    options.onConflict?.(c);
  };
  const count = (kind: CopyKind, outcome: RestoreResult<unknown>['outcome']) => {
    if (outcome === 'created') report[kind].copied++;
    else if (outcome === 'present') report[kind].already_there++;
  };

  for (const kind of ['completions', 'starts', 'events', 'entries'] as const) {
    for await (const page of from[kind].pages(pageSize)) {
      report[kind].skipped += page.skipped;
      const results = await to[kind].restore(page.records);
      results.forEach((r, i) => {
        count(kind, r.outcome);
        const record = page.records[i] as JsonRecord;
        if (r.outcome === 'conflict') conflict(recordConflict(kind, to[kind], record, r.stored));
      });
    }
  }

  for await (const page of from.training.pages(Math.min(pageSize, RUN_PAGE))) {
    report.training_runs.skipped += page.skipped;
    for (const run of page.runs) {
      const r = await to.training.restore(run);
      count('training_runs', r.outcome);
      if (r.outcome === 'conflict') {
        // No stored run: its file is there but unreadable.
        const differing = r.stored ? recordDifferences(r.stored, run) : ['run'];
        conflict({ kind: 'training_runs', id: run.run_id, differing });
      }
    }
  }

  const keys = await from.credentials.all();
  for (let i = 0; i < keys.length; i += pageSize) {
    const batch = keys.slice(i, i + pageSize);
    const results = await to.credentials.restore(batch);
    for (const [n, r] of results.entries()) {
      const source = batch[n] as KeyRecord;
      if (r.outcome === 'conflict') {
        conflict({ kind: 'api_keys', id: source.key_id, differing: keyDifferences(r.stored, source) });
        continue;
      }
      if (r.outcome === 'present' && (await carryForward(to, source, r.stored))) report.api_keys.updated++;
      else count('api_keys', r.outcome);
    }
  }

  const secret = await from.tokenSecret.current();
  if (secret) {
    const r = await to.tokenSecret.restore(secret);
    count('token_secret', r.outcome);
    if (r.outcome === 'conflict') conflict({ kind: 'token_secret', id: 'token secret', differing: ['secret'] });
  }

  for (const series of SERIES) {
    for await (const page of from.series.pages(series, pageSize)) {
      report[series].skipped += page.skipped;
      const r = await to.series.restore(series, page.records);
      report[series].copied += r.created;
      report[series].already_there += r.present;
    }
  }

  for await (const page of from.probes.pages(pageSize)) {
    report.provider_probes.skipped += page.skipped;
    const r = await to.probes.restore(page.records);
    report.provider_probes.copied += r.created;
    report.provider_probes.already_there += r.present;
  }

  const heartbeat = await from.series.heartbeat();
  if (heartbeat.exists && heartbeat.error !== null) report.heartbeat.skipped++;
  else if (heartbeat.exists) {
    const outcome = await to.series.restoreHeartbeat(heartbeat.data);
    count('heartbeat', outcome);
    if (outcome === 'conflict') conflict({ kind: 'heartbeat', id: 'heartbeat', differing: documentDifferences((await to.series.heartbeat()).data, heartbeat.data) });
  }
  for (const { target, since } of await from.outbox.targets()) await to.outbox.targetSince(target, new Date(since));
  for await (const page of from.outbox.pages(pageSize)) {
    const r = await to.outbox.restore(page);
    report.notify_outbox.copied += r.created;
    report.notify_outbox.already_there += r.present;
  }
  return report;
}

const SERIES: readonly SeriesName[] = ['trends', 'disk', 'pulse'];

/** The top-level fields in which two documents differ (of two objects), else the document as a whole. */
function documentDifferences(stored: unknown, copied: unknown): string[] {
  const isRecord = (v: unknown): v is JsonRecord => typeof v === 'object' && v !== null && !Array.isArray(v);
  return isRecord(stored) && isRecord(copied) ? recordDifferences(stored, copied) : ['heartbeat'];
}

function recordConflict(kind: CopyKind, records: KeyedRecords, record: JsonRecord, stored: JsonRecord): CopyConflict {
  const spec: KeyedLogSpec = records.spec;
  return {
    kind,
    id: String(record[spec.id.field]),
    key: Object.fromEntries(spec.key.map((f) => [f, String(record[f])])),
    differing: recordDifferences(stored, record),
  };
}

/** Revokes (and touches) the destination's copy of a key as the source's was since; whether anything changed. */
async function carryForward(to: Store, source: KeyRecord, stored: KeyRecord): Promise<boolean> {
  let changed = false;
  if (source.revoked_at && !stored.revoked_at) {
    await to.credentials.revoke(source.key_id, new Date(source.revoked_at));
    changed = true;
  }
  if (source.last_used_at && (!stored.last_used_at || Date.parse(source.last_used_at) > Date.parse(stored.last_used_at))) {
    await to.credentials.touch(source.key_id, new Date(source.last_used_at));
    changed = true;
  }
  return changed;
}
