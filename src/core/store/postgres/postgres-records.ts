import type { FacetFilter, FacetValue } from '../../jsonl/indexed-file.ts';
import type { JsonRecord } from '../../jsonl/parse-record.ts';
import { differing, newKeyedRecord, pick, type KeyedLogSpec, type KeyedWriteResult, type WriteExtra } from '../../keyed-log.ts';
import type { LogPage } from '../../record-log.ts';
import type { KeyedRecords, RecordPage, RestoreResult, Tally } from '../store.ts';
import { transaction, withinDeadline, type JSONValue, type Sql } from './connect.ts';
import { KeptReads, MAX_KEPT_PAGE } from './kept-reads.ts';
import type { Notifications } from './notifications.ts';
import { postgresRecordPages, restorePostgresRecords, type RecordsTableAccess } from './postgres-restore.ts';
import { tallyOf } from './postgres-tally.ts';

// A keyed record log in a table of migrations.ts (completions, entries, work_starts, watched_events).
//
// Writes: each key is stored once by the table's unique constraints
// (INSERT … ON CONFLICT DO NOTHING); a write that inserted nothing reads the
// stored row and is a replay or a conflict. Writes waiting at once go in one
// transaction (one commit for the batch). The transaction takes a lock of
// its log before inserting, so event ids are given in commit order: a reader
// that has seen event N has seen every event below N, and catching up by
// `event_id > N` (subscriptions, resumed streams) never skips a record.
// The transaction NOTIFYs the log's channel with the newest event id.

/** Writes waiting at once are stored in transactions of at most this many. */
const MAX_BATCH = 512;
/** Rows read per query when catching up. */
const PAGE = 1000;
/** How often a log with subscribers checks for records and for a lost LISTEN, notifications or not. */
const POLL_MS = 1000;
/** First key of the advisory locks of the record logs ("estl"); the second is the table's number. */
const LOG_LOCK = 0x6573746c;

export interface RecordsTable {
  name: 'completions' | 'entries' | 'work_starts' | 'watched_events';
  /** Second key of its advisory lock. */
  lockId: number;
}

interface PendingWrite {
  fields: JsonRecord;
  now: () => Date;
  extra: WriteExtra | undefined;
  resolve: (result: KeyedWriteResult) => void;
  reject: (err: unknown) => void;
}

type Listener = (records: JsonRecord[]) => void;

/** A row of a record log: its commit order and the record. */
interface EventRow {
  event_id: bigint;
  record: JsonRecord;
}

/** Records as one json parameter (they hold only JSON values: they came from a parsed body). */
function asJson(sql: Pick<Sql, 'json'>, records: JsonRecord[]) {
  return sql.json(records as unknown as JSONValue);
}

export class PostgresRecords implements KeyedRecords {
  readonly spec: KeyedLogSpec;
  readonly #sql: Sql;
  readonly #table: RecordsTable;
  readonly #store: string;
  readonly #notifications: () => Notifications;
  /** Columns filled from the record: its key fields and facets (the id goes to `id`). */
  readonly #columns: string[];
  #pending: PendingWrite[] = [];
  #flushing: Promise<void> | undefined;
  // Subscriptions: one cursor (the last event id delivered) for all listeners of this log.
  readonly #listeners = new Set<Listener>();
  readonly #onErrors = new Set<(err: unknown) => void>();
  #cursor: string | undefined;
  #pumping: Promise<void> | undefined;
  #again = false;
  #failing = false;
  #poll: NodeJS.Timeout | undefined;
  #unlisten: (() => void) | undefined;
  #starting: Promise<void> | undefined;
  /** Pages and tallies read, for the next reads until the log changes. */
  readonly #kept: KeptReads;

  constructor(sql: Sql, spec: KeyedLogSpec, table: RecordsTable, store: string, notifications: () => Notifications) {
    this.#sql = sql;
    this.spec = spec;
    this.#table = table;
    this.#store = store;
    this.#notifications = notifications;
    this.#columns = [...new Set([...spec.key, ...spec.facets])];
    this.#kept = new KeptReads(notifications, this.#channel);
  }

  get #channel(): string {
    return `estate_${this.#table.name}`;
  }

  /** A record as stored by the data dir: id first, the client's fields in order, the time last (jsonb keeps no order). */
  #ordered(record: JsonRecord): JsonRecord {
    const out: JsonRecord = {};
    for (const f of [this.spec.id.field, ...this.spec.fields, this.spec.time, ...(this.spec.extra ?? [])]) if (record[f] !== undefined) out[f] = record[f];
    for (const [f, v] of Object.entries(record)) if (!(f in out)) out[f] = v;
    return out;
  }

  #facetColumn(where: FacetFilter | undefined): string | undefined {
    if (!where) return undefined;
    if (!this.spec.facets.includes(where.facet)) throw new Error(`${where.facet} is not a facet of ${this.#table.name}`);
    return where.facet;
  }

  write(input: object, now: () => Date, extra?: WriteExtra): Promise<KeyedWriteResult> {
    const fields = pick(input, this.spec.fields);
    return new Promise((resolve, reject) => {
      this.#pending.push({ fields, now, extra, resolve, reject });
      this.#flushing ??= this.#flush();
    });
  }

  async #flush(): Promise<void> {
    try {
      while (this.#pending.length > 0) {
        const batch = this.#pending.splice(0, MAX_BATCH);
        try {
          const results = await withinDeadline(this.#store, () => this.#writeBatch(batch));
          this.#kept.changed();
          batch.forEach((w, i) => w.resolve(results[i] as KeyedWriteResult));
        } catch (err) {
          // It may have committed.
          this.#kept.changed();
          for (const w of batch) w.reject(err);
        }
      }
    } finally {
      this.#flushing = undefined;
    }
  }

  #newRecord(w: PendingWrite): JsonRecord {
    return newKeyedRecord(this.spec, w.fields, w.now, w.extra);
  }

  byKey(values: readonly [string, string]): Promise<JsonRecord | undefined> {
    const [k1, k2] = this.spec.key;
    return withinDeadline(this.#store, async () => {
      const [row] = await this.#sql`SELECT record FROM ${this.#sql(this.#table.name)} WHERE ${this.#sql(k1 as string)} = ${values[0]} AND ${this.#sql(k2 as string)} = ${values[1]}`;
      return row ? this.#ordered(row.record as JsonRecord) : undefined;
    });
  }

  async #writeBatch(batch: PendingWrite[]): Promise<KeyedWriteResult[]> {
    const { spec } = this;
    const table = this.#table.name;
    const cols = this.#columns;
    const keyOf = (r: JsonRecord) => JSON.stringify(spec.key.map((f) => r[f]));
    const insertText =
      `INSERT INTO ${table} (id, ${cols.join(', ')}, record) ` +
      `SELECT r->>'${spec.id.field}', ${cols.map((c) => `r->>'${c}'`).join(', ')}, r FROM jsonb_array_elements($1::jsonb) AS r ` +
      'ON CONFLICT DO NOTHING RETURNING id, event_id';
    const [k1, k2] = spec.key;
    const existingText = `SELECT record FROM ${table} WHERE (${k1}, ${k2}) IN (SELECT r->>'${k1}', r->>'${k2}' FROM jsonb_array_elements($1::jsonb) AS r)`;
    return transaction(this.#sql, async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${LOG_LOCK}, ${this.#table.lockId})`;
      const results: (KeyedWriteResult | undefined)[] = batch.map(() => undefined);
      let todo = batch.map((w, i) => ({ w, i }));
      let newest: string | undefined;
      // A second round only for an id already taken (64 random bits: practically never).
      for (let round = 0; todo.length > 0 && round < 5; round++) {
        const records = todo.map(({ w }) => this.#newRecord(w));
        const inserted = await tx.unsafe(insertText, [asJson(tx, records)]);
        const insertedIds = new Map<string, string>(inserted.map((row) => [String(row.id), String(row.event_id)]));
        for (const row of inserted) if (newest === undefined || BigInt(row.event_id) > BigInt(newest)) newest = String(row.event_id);
        const rest: typeof todo = [];
        const restRecords: JsonRecord[] = [];
        todo.forEach((t, n) => {
          const record = records[n] as JsonRecord;
          if (insertedIds.has(record[spec.id.field] as string)) results[t.i] = { outcome: 'created', record, differing: [] };
          else {
            rest.push(t);
            restRecords.push(record);
          }
        });
        todo = rest;
        if (rest.length === 0) break;
        const stored = await tx.unsafe(existingText, [asJson(tx, restRecords)]);
        const byKey = new Map(stored.map((row) => [keyOf(row.record as JsonRecord), this.#ordered(row.record as JsonRecord)]));
        todo = [];
        for (const t of rest) {
          const existing = byKey.get(keyOf(t.w.fields));
          if (!existing) todo.push(t);
          else {
            const diff = differing(existing, t.w.fields, spec.fields);
            results[t.i] = { outcome: diff.length === 0 ? 'replayed' : 'conflict', record: existing, differing: diff };
          }
        }
      }
      if (todo.length > 0) throw new Error(`could not find a free ${spec.id.field} for ${table}`);
      if (newest !== undefined) await tx`SELECT pg_notify(${this.#channel}, ${newest})`;
      return results as KeyedWriteResult[];
    });
  }

  /** Pages of up to MAX_KEPT_PAGE records are kept until the log changes (kept-reads.ts). */
  newest(limit: number, where?: FacetFilter): Promise<LogPage> {
    const read = () => this.#lastRecords(where, '0', limit);
    // A filter by predicate (the garden's content types) has no key to keep its page by.
    const keyed = where === undefined || 'value' in where;
    return withinDeadline(this.#store, async () => {
      const records =
        keyed && limit > 0 && limit <= MAX_KEPT_PAGE ? await this.#kept.page(JSON.stringify([this.#facetColumn(where) ?? null, where?.value ?? null, limit]), read) : await read();
      return { records, skipped: 0 };
    });
  }

  /**
   * Deletes the records whose `field` (an ISO 8601 UTC time, compared as
   * text: estate writes them with toISOString) is before `before`; answers
   * how many. This process's kept pages are dropped; another's at its next write.
   */
  pruneBefore(field: string, before: Date): Promise<number> {
    return withinDeadline(this.#store, async () => {
      const rows = await this.#sql`DELETE FROM ${this.#sql(this.#table.name)} WHERE record->>${field} < ${before.toISOString()} RETURNING 1`;
      this.#kept.changed();
      return rows.length;
    });
  }

  get(id: string): Promise<JsonRecord | undefined> {
    return withinDeadline(this.#store, async () => {
      const [row] = await this.#sql`SELECT record FROM ${this.#sql(this.#table.name)} WHERE id = ${id}`;
      return row ? this.#ordered(row.record as JsonRecord) : undefined;
    });
  }

  since(after: string, limit: number, where?: FacetFilter): Promise<JsonRecord[] | undefined> {
    return withinDeadline(this.#store, async () => {
      let from = '0';
      if (after !== 'start') {
        const [row] = await this.#sql`SELECT event_id FROM ${this.#sql(this.#table.name)} WHERE id = ${after}`;
        if (!row) return undefined;
        from = String(row.event_id);
      }
      return (await this.#lastRecords(where, from, limit)).reverse();
    });
  }

  /**
   * The newest `limit` records after event `from`, newest first: of every
   * value, of one, or of each stored value `where.accepts` takes (the newest
   * `limit` of each, read as for one value, then the newest of those).
   */
  async #lastRecords(where: FacetFilter | undefined, from: string, limit: number): Promise<JsonRecord[]> {
    let rows: EventRow[];
    if (where && !('value' in where)) {
      const facet = this.#facetColumn(where) as string;
      const values = (await this.#storedValues(facet)).filter((v) => where.accepts(v));
      const pages = await Promise.all(values.map((value) => this.#lastRows({ facet, value }, from, limit)));
      rows = pages.flat().sort((a, b) => (b.event_id > a.event_id ? 1 : -1)).slice(0, limit);
    } else rows = await this.#lastRows(where, from, limit);
    return rows.map((r) => this.#ordered(r.record));
  }

  /** The newest `limit` rows after event `from`, newest first: all, or of one facet value (through the facet's index). */
  async #lastRows(where: FacetValue | undefined, from: string, limit: number): Promise<EventRow[]> {
    const sql = this.#sql;
    const table = sql(this.#table.name);
    const facet = this.#facetColumn(where);
    const rows =
      where === undefined || facet === undefined
        ? await sql`SELECT event_id, record FROM ${table} WHERE event_id > ${from} ORDER BY event_id DESC LIMIT ${limit}`
        : await sql`SELECT event_id, record FROM ${table} WHERE ${sql(facet)} = ${where.value} AND event_id > ${from} ORDER BY event_id DESC LIMIT ${limit}`;
    return rows.map((r) => ({ event_id: BigInt(r.event_id as string), record: r.record as JsonRecord }));
  }

  /** The distinct values of facet column `facet`: a skip scan of its index, one probe per value, whatever the table's size. */
  async #storedValues(facet: string): Promise<string[]> {
    const sql = this.#sql;
    const table = sql(this.#table.name);
    const column = sql(facet);
    const rows = await sql`
      WITH RECURSIVE facet_values(value) AS (
        (SELECT ${column} FROM ${table} ORDER BY ${column} LIMIT 1)
        UNION ALL
        SELECT (SELECT ${column} FROM ${table} WHERE ${column} > facet_values.value ORDER BY ${column} LIMIT 1) FROM facet_values WHERE facet_values.value IS NOT NULL
      )
      SELECT value FROM facet_values WHERE value IS NOT NULL`;
    return rows.map((r) => String(r.value));
  }

  async subscribe(listener: Listener, onError?: (err: unknown) => void): Promise<() => Promise<void>> {
    if (this.#listeners.size === 0 && this.#cursor === undefined) {
      this.#starting ??= this.#start().finally(() => (this.#starting = undefined));
      await this.#starting;
    } else {
      await this.#starting;
      // Everything already written goes to the listeners already there.
      await this.refresh();
    }
    const own: Listener = (records) => listener(records);
    const report = (err: unknown) => onError?.(err);
    this.#listeners.add(own);
    this.#onErrors.add(report);
    let ended = false;
    return async () => {
      if (ended) return;
      ended = true;
      this.#listeners.delete(own);
      this.#onErrors.delete(report);
      if (this.#listeners.size === 0) this.#stop();
    };
  }

  /** First subscriber: LISTEN, then start from the newest event (anything committed later has a higher id). */
  async #start(): Promise<void> {
    const unlisten = await withinDeadline(this.#store, () => this.#notifications().listen(this.#channel, () => this.#wake()));
    try {
      const [row] = await withinDeadline(this.#store, () => this.#sql`SELECT coalesce(max(event_id), 0)::text AS newest FROM ${this.#sql(this.#table.name)}`);
      this.#cursor = String(row?.newest ?? '0');
    } catch (err) {
      unlisten();
      throw err;
    }
    this.#unlisten = unlisten;
    // The poll reads by event id whether or not the LISTEN is back, so it never waits on a connection that is down.
    this.#poll = setInterval(() => {
      void this.#notifications()
        .ensure()
        .catch(() => {});
      this.#wake();
    }, POLL_MS);
    this.#poll.unref();
  }

  #stop(): void {
    clearInterval(this.#poll);
    this.#poll = undefined;
    this.#cursor = undefined;
    const unlisten = this.#unlisten;
    this.#unlisten = undefined;
    unlisten?.();
  }

  #wake(): void {
    void this.refresh().catch(() => {});
  }

  /** For reading the log whole and restoring records made elsewhere (postgres-restore.ts). */
  get #access(): RecordsTableAccess {
    return {
      sql: this.#sql,
      spec: this.spec,
      table: this.#table.name,
      lock: [LOG_LOCK, this.#table.lockId],
      channel: this.#channel,
      store: this.#store,
      ordered: (record) => this.#ordered(record),
    };
  }

  pages(pageSize: number): AsyncIterable<RecordPage> {
    return postgresRecordPages(this.#access, pageSize);
  }

  restore(records: readonly JsonRecord[]): Promise<RestoreResult<JsonRecord>[]> {
    return restorePostgresRecords(this.#access, records).finally(() => this.#kept.changed());
  }

  /**
   * From the counts kept in the write transaction (postgres-tally.ts), in one
   * statement: a few rows read whatever the log's size; kept until the log
   * changes or the cutoffs pass a record (kept-reads.ts).
   */
  tally(cutoffs: readonly Date[]): Promise<Tally> {
    return withinDeadline(this.#store, () =>
      this.#kept.tally(cutoffs, () => tallyOf(this.#sql, this.#table.name, this.spec, cutoffs, (record) => this.#ordered(record))),
    );
  }

  /** Delivers what was committed since the cursor; one pass at a time (a call during a pass runs another after it). */
  refresh(): Promise<void> {
    if (this.#cursor === undefined) return Promise.resolve();
    if (this.#pumping) {
      this.#again = true;
      return this.#pumping;
    }
    this.#pumping = (async () => {
      try {
        do {
          this.#again = false;
          await this.#pump();
        } while (this.#again);
      } finally {
        this.#pumping = undefined;
      }
    })();
    return this.#pumping;
  }

  async #pump(): Promise<void> {
    try {
      for (;;) {
        const cursor = this.#cursor;
        if (cursor === undefined) return;
        const rows = await withinDeadline(
          this.#store,
          () => this.#sql`SELECT event_id::text AS event, record FROM ${this.#sql(this.#table.name)} WHERE event_id > ${cursor} ORDER BY event_id LIMIT ${PAGE}`,
        );
        if (this.#cursor !== cursor) return;
        const last = rows.at(-1);
        if (last) {
          this.#cursor = String(last.event);
          const records = rows.map((r) => this.#ordered(r.record as JsonRecord));
          for (const listener of [...this.#listeners]) {
            try {
              listener(records);
            } catch {
              // A listener's failure is its own.
            }
          }
        }
        this.#failing = false;
        if (rows.length < PAGE) return;
      }
    } catch (err) {
      // Reported once per outage; the poll keeps trying.
      if (!this.#failing) for (const report of [...this.#onErrors]) report(err);
      this.#failing = true;
      throw err;
    }
  }

  /** Ends the subscriptions and waits for the writes under way. */
  async close(): Promise<void> {
    await this.#flushing;
    this.#listeners.clear();
    this.#onErrors.clear();
    this.#stop();
    this.#kept.close();
  }
}
