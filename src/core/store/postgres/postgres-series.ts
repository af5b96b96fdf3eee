import type { HeartbeatEntry } from '../../collect/sample-types.ts';
import type { JsonRecord } from '../../jsonl/parse-record.ts';
import { canonicalJson } from '../../keyed-log.ts';
import { heartbeatShapeProblem, mergeHeartbeatEntries, newestEntries } from '../../series/heartbeat-document.ts';
import { assertSeriesRecords, checkedSample } from '../../series/series-logs.ts';
import type { HeartbeatOutcome } from '../../series/heartbeat-merge.ts';
import { MAX_PARSED_STATE_BYTES, type StateDocument } from '../../state-files.ts';
import type { IngestResult, Series, SeriesFilter, SeriesName } from '../store.ts';
import { transaction, withinDeadline, type Sql, type TransactionSql } from './connect.ts';
import type { RollupRetention } from '../../rollups/range-types.ts';
import { postgresRollups } from './postgres-rollups.ts';

// The series of DESIGN.md 7a in PostgreSQL (schema: migration 3 in
// migrations.ts): trend points, disk snapshots and pulse entries one row per
// record in `series_trends`, `series_disk`, `series_pulse`; the nodes in
// `series_nodes` (a trigger adds them in each insert's transaction); the
// heartbeat, one JSON document, in `series_heartbeat`, merged under its row
// lock with the rules the data dir's file follows (series/heartbeat-document.ts).

interface SeriesTable {
  table: string;
  /** A record's identity: the string fields that make it unique (a record lacking one is not unique). */
  key: readonly string[];
}

const TABLES: Readonly<Record<SeriesName, SeriesTable>> = {
  trends: { table: 'series_trends', key: ['node', 'ts'] },
  disk: { table: 'series_disk', key: ['node', 'ts', 'mount'] },
  pulse: { table: 'series_pulse', key: ['node', 'ts'] },
};

/**
 * First key of the advisory locks that make one prune of a series at a time
 * ("essp"; the second key is the series): a batch is deleted under it, and a
 * prune that finds it taken stops there, the one holding it deleting the rest.
 */
const PRUNE_LOCK = 0x65737370;

/** First key of the advisory locks that serialise restores of records without a key, per table ("esse"). */
const UNKEYED_LOCK = 0x65737365;

/** Rows a prune deletes in one transaction: short transactions, whatever the backlog (a first prune of a year of rows). */
const PRUNE_BATCH = 10_000;

/**
 * Deletes up to `$2` rows of `table` dated before `$1` (series_ts_time,
 * through its index: migration 4). Answers how many it deleted and their nodes.
 */
function pruneText(table: string): string {
  return `WITH gone AS (
  DELETE FROM ${table} WHERE seq IN (SELECT seq FROM ${table} WHERE series_ts_time(ts) < $1 LIMIT $2)
  RETURNING node
)
SELECT count(*)::int AS removed, coalesce(array_agg(DISTINCT node) FILTER (WHERE node IS NOT NULL), '{}') AS nodes FROM gone`;
}

/**
 * Removes from series_nodes the nodes of `$1` (a JSON list) that no series holds a row of
 * any more. The table lock (which every insert's trigger conflicts with)
 * waits for the inserts under way and holds new ones back for this
 * statement, so a node that gets a row meanwhile is never left out.
 */
const FORGET_NODES = `DELETE FROM series_nodes n WHERE n.node IN (SELECT json_array_elements_text($1::text::json))
  AND NOT EXISTS (SELECT 1 FROM series_trends WHERE node = n.node)
  AND NOT EXISTS (SELECT 1 FROM series_disk WHERE node = n.node)
  AND NOT EXISTS (SELECT 1 FROM series_pulse WHERE node = n.node)`;

/** A deadlock or a serialization failure: the transaction is tried again, at most this many times in all. */
const ATTEMPTS = 3;
const RETRIED_CODES = new Set(['40P01', '40001']);

/**
 * Inserts the records of `$1` (a JSON list of `{k: [key values], r: record}`,
 * the key values computed by `keyValues`) in their order; one whose key is
 * stored already is left out (ON CONFLICT DO NOTHING). With `unkeyed`, a
 * record without a full key is left out when one with the same text is
 * stored (store copy: each once). Returns the inserted rows' node and ts.
 */
function insertText(t: SeriesTable, unkeyed: 'dedupe' | 'keep'): string {
  const cols = t.key.join(', ');
  const keyed = t.key.map((c) => `e.${c} IS NOT NULL`).join(' AND ');
  const storedUnkeyed = t.key.map((c) => `s.${c} IS NULL`).join(' OR ');
  const dedupe =
    unkeyed === 'dedupe'
      ? `WHERE (${keyed}) OR NOT EXISTS (SELECT 1 FROM ${t.table} s WHERE (${storedUnkeyed}) AND md5(s.record::text) = md5(e.r::text) AND s.record::text = e.r::text)`
      : '';
  return `WITH e AS (
  SELECT ${t.key.map((c, i) => `a.x->'k'->>${i} AS ${c}`).join(', ')}, a.x->'r' AS r, a.n
  FROM json_array_elements($1::text::json) WITH ORDINALITY AS a(x, n)
)
INSERT INTO ${t.table} (${cols}, record)
SELECT ${t.key.map((c) => `e.${c}`).join(', ')}, e.r FROM e
${dedupe}
ORDER BY e.n
ON CONFLICT DO NOTHING
RETURNING node, ts`;
}

const INSERT_TEXT = {
  keep: Object.fromEntries(Object.entries(TABLES).map(([name, t]) => [name, insertText(t, 'keep')])) as Record<SeriesName, string>,
  dedupe: Object.fromEntries(Object.entries(TABLES).map(([name, t]) => [name, insertText(t, 'dedupe')])) as Record<SeriesName, string>,
};

/** A record's key values: its string fields `t.key` (null when absent, not a string, or holding NUL, which PostgreSQL's text cannot). */
function keyValues(t: SeriesTable, record: object): (string | null)[] {
  return t.key.map((f) => {
    const value = (record as Record<string, unknown>)[f];
    return typeof value === 'string' && !value.includes('\0') ? value : null;
  });
}

/** The `$1` of insertText: each record's text kept as JSON.stringify writes it (its fields in their order). */
function insertParameter(t: SeriesTable, records: readonly object[]): string {
  return `[${records.map((r) => `{"k":${JSON.stringify(keyValues(t, r))},"r":${JSON.stringify(r)}}`).join(',')}]`;
}

const sampleKey = (node: unknown, ts: unknown) => `${String(node)}\0${String(ts)}`;

/** The Series of a PostgreSQL store; `store` names it in errors. */
export function postgresSeries(sql: Sql, store: string, retention: RollupRetention): Series {
  const insert = (tx: TransactionSql, series: SeriesName, records: readonly object[], unkeyed: 'dedupe' | 'keep' = 'keep') =>
    records.length === 0 ? Promise.resolve([]) : tx.unsafe(INSERT_TEXT[unkeyed][series], [insertParameter(TABLES[series], records)], { prepare: true });

  /** `work` in a transaction within the store's deadline, tried again after a deadlock (concurrent hubs' batches in different orders). */
  const write = <T>(work: (tx: TransactionSql) => Promise<T>): Promise<T> =>
    withinDeadline(store, async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await transaction(sql, work);
        } catch (err) {
          const code = (err as { code?: unknown } | undefined)?.code;
          if (attempt >= ATTEMPTS || typeof code !== 'string' || !RETRIED_CODES.has(code)) throw err;
        }
      }
    });

  // Ingests' heartbeat entries, merged many calls at a time: the heartbeat row is one lock every hub takes.
  const heartbeats = new HeartbeatMerges((entries) =>
    write((tx) =>
      changeHeartbeat(tx, (current) => {
        // A heartbeat that is not one is left as it is (the samples are stored).
        if (heartbeatShapeProblem(current, 'the heartbeat') !== undefined) return undefined;
        const merged = mergeHeartbeatEntries(current, entries, { keep: 'newer' });
        return merged.changed ? merged.heartbeat : undefined;
      }),
    ),
  );

  return {
    ...postgresRollups(sql, store, retention),
    appendSample: async (sample) => {
      await write(async (tx) => {
        await insert(tx, 'trends', [sample.trend]);
        await insert(tx, 'disk', sample.disks);
        await insert(tx, 'pulse', [sample.pulse]);
      });
    },

    ingest: async (samples) => {
      samples.forEach(checkedSample);
      if (samples.length === 0) return { stored: 0, duplicates: 0 };
      const result = await write(async (tx): Promise<IngestResult> => {
        const fresh = new Set<string>();
        for (const [series, records] of [
          ['trends', samples.map((s) => s.trend)],
          ['disk', samples.flatMap((s) => s.disks)],
          ['pulse', samples.map((s) => s.pulse)],
        ] as const) {
          for (const row of await insert(tx, series, records)) fresh.add(sampleKey(row.node, row.ts));
        }
        // A sample is stored when any of its records was new (each is new only once).
        let stored = 0;
        for (const s of samples) if (fresh.delete(sampleKey(s.trend.node, s.trend.ts))) stored++;
        return { stored, duplicates: samples.length - stored };
      });
      // Then each node's heartbeat entry: acknowledged only once merged (a sample sent again after a failure here is a duplicate, and merges again).
      await withinDeadline(store, () => heartbeats.merge(newestEntries(samples)));
      return result;
    },

    mergeHeartbeat: (entry) =>
      write(async (tx) => {
        let outcome: HeartbeatOutcome = { outcome: 'merged' };
        await changeHeartbeat(tx, (current) => {
          const problem = heartbeatShapeProblem(current, 'the heartbeat in the store');
          if (problem === undefined) return mergeHeartbeatEntries(current, [entry]).heartbeat;
          outcome = { outcome: 'unreadable', problem };
          return undefined;
        });
        return outcome;
      }),

    heartbeat: async (): Promise<StateDocument> => {
      const [row] = await withinDeadline(
        store,
        () => sql`SELECT modified_at, octet_length(data::text) AS size,
          CASE WHEN octet_length(data::text) <= ${MAX_PARSED_STATE_BYTES} THEN data END AS data
          FROM series_heartbeat WHERE id = 1`,
      );
      if (!row) return { name: 'heartbeat', exists: false, modified_at: null, data: null, error: null };
      const modified_at = (row.modified_at as Date).toISOString();
      const size = Number(row.size);
      if (size > MAX_PARSED_STATE_BYTES) {
        return { name: 'heartbeat', exists: true, modified_at, data: null, error: `too large to parse: ${size} bytes, more than the ${MAX_PARSED_STATE_BYTES} estate parses` };
      }
      return { name: 'heartbeat', exists: true, modified_at, data: row.data, error: null };
    },

    newest: async (series, limit, where) => {
      const query = newestQuery(series, limit, where);
      const items = limit <= 0 ? [] : (await withinDeadline(store, () => sql.unsafe(query.text, query.params, { prepare: true }))).map((r) => r.record as JsonRecord);
      return { items, count: items.length, limit, skipped_lines: 0 };
    },

    nodes: async () => {
      const rows = await withinDeadline(store, () => sql`SELECT node FROM series_nodes`);
      return rows.map((r) => String(r.node)).sort();
    },

    pages: async function* (series, pageSize) {
      const { table } = TABLES[series];
      let cursor = '0';
      for (;;) {
        const from = cursor;
        const rows = await withinDeadline(store, () => sql`SELECT seq::text AS after, record FROM ${sql(table)} WHERE seq > ${from} ORDER BY seq LIMIT ${pageSize}`);
        const last = rows.at(-1);
        if (!last) return;
        cursor = String(last.after);
        yield { records: rows.map((r) => r.record as JsonRecord), skipped: 0 };
        if (rows.length < pageSize) return;
      }
    },

    restore: async (series, records) => {
      assertSeriesRecords(series, records);
      const t = TABLES[series];
      // Records without a key are stored once by their text: the same text twice in one call is one record.
      const seen = new Set<string>();
      const unique = records.filter((r) => {
        if (keyValues(t, r).every((v) => v !== null)) return true;
        const text = JSON.stringify(r);
        if (seen.has(text)) return false;
        seen.add(text);
        return true;
      });
      const created = await write(async (tx) => {
        if (unique.length < records.length || unique.some((r) => keyValues(t, r).includes(null))) {
          await tx`SELECT pg_advisory_xact_lock(${UNKEYED_LOCK}, ${Object.keys(TABLES).indexOf(series)})`;
        }
        return (await insert(tx, series, unique, 'dedupe')).length;
      });
      return { created, present: records.length - created };
    },

    prune: async (series, before, options) => {
      const { table } = TABLES[series];
      if (options?.dryRun) {
        const [row] = await withinDeadline(store, () => sql.unsafe(`SELECT count(*)::int AS removed FROM ${table} WHERE series_ts_time(ts) < $1`, [before.toISOString()]));
        return { removed: Number(row?.removed ?? 0) };
      }
      let removed = 0;
      const emptied = new Set<string>();
      for (;;) {
        const row = await write(async (tx) => {
          const [lock] = await tx`SELECT pg_try_advisory_xact_lock(${PRUNE_LOCK}, ${Object.keys(TABLES).indexOf(series)}) AS held`;
          if (!lock?.held) return undefined;
          const [deleted] = await tx.unsafe(pruneText(table), [before.toISOString(), PRUNE_BATCH], { prepare: true });
          return deleted;
        });
        // Another prune of this series is at work: it goes on to the end.
        if (!row) break;
        const count = Number(row.removed ?? 0);
        removed += count;
        for (const node of (row.nodes ?? []) as string[]) emptied.add(node);
        if (count < PRUNE_BATCH) break;
      }
      if (emptied.size > 0) {
        await write(async (tx) => {
          await tx`LOCK TABLE series_nodes IN SHARE ROW EXCLUSIVE MODE`;
          await tx.unsafe(FORGET_NODES, [JSON.stringify([...emptied])]);
        });
      }
      return { removed };
    },

    restoreHeartbeat: (data) =>
      write(async (tx) => {
        const inserted = await tx`INSERT INTO series_heartbeat (id, data) VALUES (1, ${JSON.stringify(data ?? null)}::text::json) ON CONFLICT (id) DO NOTHING RETURNING id`;
        if (inserted.length > 0) return 'created' as const;
        const [row] = await tx`SELECT data FROM series_heartbeat WHERE id = 1`;
        return canonicalJson(row?.data) === canonicalJson(data ?? null) ? ('present' as const) : ('conflict' as const);
      }),
  };
}

/**
 * The statement of `newest` and its parameters (the limit is the last): the
 * newest rows of a series through the index of the filter, (node, seq),
 * (node, mount, seq), (mount, seq), or seq alone, reading only the rows it answers.
 */
export function newestQuery(series: SeriesName, limit: number, where: SeriesFilter | undefined): { text: string; params: (string | number)[] } {
  const { table } = TABLES[series];
  const conditions: string[] = [];
  const params: (string | number)[] = [];
  // The filter's columns come before seq in the ORDER BY, as in their index, so only that index
  // answers in that order and the planner never walks the newest rows of every node instead
  // (it may think that cheaper, not knowing that a node's newest rows can lie far back). They
  // are matched as ranges of one value: an equality would make them constants, dropped from
  // the order, and the seq index would answer it again.
  const order: string[] = [];
  if (where?.node !== undefined) {
    params.push(where.node);
    conditions.push(`node >= $${params.length} AND node <= $${params.length}`);
    order.push('node DESC');
  }
  if (where?.mount !== undefined) {
    params.push(where.mount);
    if (series === 'disk') {
      conditions.push(`mount >= $${params.length} AND mount <= $${params.length}`);
      order.push('mount DESC');
    } else {
      // Only disk snapshots have a mount column; another series' records are matched by their field (none has one as estate writes them).
      conditions.push(`json_typeof(record->'mount') = 'string' AND record->>'mount' = $${params.length}`);
    }
  }
  params.push(limit);
  const filter = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')} `;
  return { text: `SELECT record FROM ${table} ${filter}ORDER BY ${[...order, 'seq DESC'].join(', ')} LIMIT $${params.length}`, params };
}

/**
 * Heartbeat entries of concurrent ingests on one store instance, merged
 * together: while one merge runs, the entries that arrive wait and go into
 * the next, one transaction for all of them. Each caller's promise settles
 * with the merge that held its entries. Merging an entry later than another
 * of the same node's is safe: `keep: 'newer'` keeps the newest.
 */
class HeartbeatMerges {
  readonly #apply: (entries: HeartbeatEntry[]) => Promise<void>;
  #pending: { entries: HeartbeatEntry[]; waiters: { resolve: () => void; reject: (err: unknown) => void }[] } | undefined;
  #running = false;

  constructor(apply: (entries: HeartbeatEntry[]) => Promise<void>) {
    this.#apply = apply;
  }

  merge(entries: readonly HeartbeatEntry[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#pending ??= { entries: [], waiters: [] };
      this.#pending.entries.push(...entries);
      this.#pending.waiters.push({ resolve, reject });
      this.#next();
    });
  }

  #next(): void {
    const batch = this.#pending;
    if (this.#running || !batch) return;
    this.#pending = undefined;
    this.#running = true;
    this.#apply(batch.entries)
      .then(
        () => batch.waiters.forEach((w) => w.resolve()),
        (err: unknown) => batch.waiters.forEach((w) => w.reject(err)),
      )
      .finally(() => {
        this.#running = false;
        this.#next();
      });
  }
}

/**
 * Changes the heartbeat under its row lock: `change` gets the stored
 * document (`{"nodes": []}` when there is none) and returns the new one, or
 * undefined to leave it as it is. Two first writers at once: one inserts,
 * the other reads what it inserted and changes that.
 */
async function changeHeartbeat(tx: TransactionSql, change: (current: unknown) => unknown): Promise<void> {
  for (;;) {
    const [row] = await tx`SELECT data FROM series_heartbeat WHERE id = 1 FOR UPDATE`;
    const next = change(row ? row.data : { nodes: [] });
    if (next === undefined) return;
    if (row) {
      await tx`UPDATE series_heartbeat SET data = ${JSON.stringify(next)}::text::json, modified_at = now() WHERE id = 1`;
      return;
    }
    const inserted = await tx`INSERT INTO series_heartbeat (id, data) VALUES (1, ${JSON.stringify(next)}::text::json) ON CONFLICT (id) DO NOTHING RETURNING id`;
    if (inserted.length > 0) return;
  }
}
