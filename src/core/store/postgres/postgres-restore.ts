import type { JsonRecord } from '../../jsonl/parse-record.ts';
import { assertRestorable, recordDifferences, type KeyedLogSpec } from '../../keyed-log.ts';
import type { RecordPage, RestoreResult } from '../store.ts';
import { transaction, withinDeadline, type JSONValue, type Sql } from './connect.ts';

// A keyed record log of the PostgreSQL store read whole and written with
// records made elsewhere (KeyedRecords.pages and .restore, for copying a
// store: copy-store.ts). Restored records take the same log lock as writes
// (postgres-records.ts), so event ids follow the order given and commit
// order, and NOTIFY the log's channel: live feeds see them.

/** What of a PostgresRecords these functions use. */
export interface RecordsTableAccess {
  sql: Sql;
  spec: KeyedLogSpec;
  /** The table (`completions`, `entries`), its advisory lock keys and its NOTIFY channel. */
  table: string;
  lock: readonly [number, number];
  channel: string;
  /** The store's name for errors. */
  store: string;
  /** A stored record in the data dir's field order. */
  ordered: (record: JsonRecord) => JsonRecord;
}

/** Every record, oldest first (by event id), `pageSize` rows per query. */
export async function* postgresRecordPages(t: RecordsTableAccess, pageSize: number): AsyncGenerator<RecordPage> {
  let cursor = '0';
  for (;;) {
    const from = cursor;
    const rows = await withinDeadline(
      t.store,
      () => t.sql`SELECT event_id::text AS event, record FROM ${t.sql(t.table)} WHERE event_id > ${from} ORDER BY event_id LIMIT ${pageSize}`,
    );
    const last = rows.at(-1);
    if (!last) return;
    cursor = String(last.event);
    yield { records: rows.map((r) => t.ordered(r.record as JsonRecord)), skipped: 0 };
    if (rows.length < pageSize) return;
  }
}

/** Stores `records` with their own ids and times, in order, in one transaction; see KeyedRecords.restore. */
export async function restorePostgresRecords(t: RecordsTableAccess, records: readonly JsonRecord[]): Promise<RestoreResult<JsonRecord>[]> {
  const { spec } = t;
  records.forEach((r) => assertRestorable(spec, r));
  if (records.length === 0) return [];
  const cols = [...new Set([...spec.key, ...spec.facets])];
  const [k1, k2] = spec.key;
  const id = spec.id.field;
  const identity = (values: unknown[]) => JSON.stringify(values.map(String));
  const insertText =
    `INSERT INTO ${t.table} (id, ${cols.join(', ')}, record) ` +
    `SELECT r->>'${id}', ${cols.map((c) => `r->>'${c}'`).join(', ')}, r FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS e(r, n) ORDER BY n ` +
    `ON CONFLICT DO NOTHING RETURNING id, ${k1}, ${k2}, event_id::text AS event`;
  const storedText =
    `SELECT record FROM ${t.table} WHERE id IN (SELECT r->>'${id}' FROM jsonb_array_elements($1::jsonb) AS r) ` +
    `OR (${k1}, ${k2}) IN (SELECT r->>'${k1}', r->>'${k2}' FROM jsonb_array_elements($1::jsonb) AS r)`;
  return withinDeadline(t.store, () =>
    transaction(t.sql, async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${t.lock[0]}, ${t.lock[1]})`;
      const inserted = await tx.unsafe(insertText, [tx.json(records as unknown as JSONValue)]);
      // Which records went in: one inserted row per (id, key), the first record that names it.
      const fresh = new Map<string, number>();
      let newest: bigint | undefined;
      for (const row of inserted) {
        const k = identity([row.id, row[k1], row[k2]]);
        fresh.set(k, (fresh.get(k) ?? 0) + 1);
        const event = BigInt(row.event as string);
        if (newest === undefined || event > newest) newest = event;
      }
      const results: (RestoreResult<JsonRecord> | undefined)[] = records.map((r) => {
        const k = identity([r[id], r[k1], r[k2]]);
        const left = fresh.get(k) ?? 0;
        if (left === 0) return undefined;
        fresh.set(k, left - 1);
        return { outcome: 'created', stored: t.ordered(r) };
      });
      const rest = records.filter((_, i) => results[i] === undefined);
      if (rest.length > 0) {
        const stored = (await tx.unsafe(storedText, [tx.json(rest as unknown as JSONValue)])).map((row) => t.ordered(row.record as JsonRecord));
        const byKey = new Map(stored.map((s) => [identity([s[k1], s[k2]]), s]));
        const byId = new Map(stored.map((s) => [String(s[id]), s]));
        records.forEach((r, i) => {
          if (results[i]) return;
          const holder = byKey.get(identity([r[k1], r[k2]])) ?? byId.get(String(r[id]));
          if (!holder) throw new Error(`${t.table}: a record was neither stored nor found under its key or id`);
          results[i] = { outcome: recordDifferences(holder, r).length === 0 ? 'present' : 'conflict', stored: holder };
        });
      }
      if (newest !== undefined) await tx`SELECT pg_notify(${t.channel}, ${String(newest)})`;
      return results as RestoreResult<JsonRecord>[];
    }),
  );
}
