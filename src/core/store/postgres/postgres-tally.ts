import type { JsonRecord } from '../../jsonl/parse-record.ts';
import type { KeyedLogSpec } from '../../keyed-log.ts';
import type { TallyGroup } from '../store.ts';
import type { Sql } from './connect.ts';
import type { SpannedTally } from './kept-reads.ts';

// KeyedRecords.tally on PostgreSQL, from the counts a trigger keeps in the
// write transaction (migrations.ts, version 2): tally_groups (per group: how
// many, the newest event id, the earliest time), tally_distinct, and
// tally_buckets (how many records' times begin with each day, hour, minute
// and second). One statement (one snapshot) reads them: its cost depends on
// the number of groups and on how far back the cutoffs reach, never on the
// number of records.
//
// Times compare as text in byte order (COLLATE "C"): estate stores them as
// `toISOString()` gives them, which sorts as it reads. A record's time t is
// at or after a cutoff c (itself a toISOString(): 24 characters) exactly
// when its first 10 characters (the day) come after c's, or they are c's and
// its first 13 (the hour) come after c's, and so on down to the second
// (19), or its first 19 are c's and t >= c. The buckets answer all but the
// last case, a few rows per width and group whatever the log's size; the
// last reads the records of one second through the index on the time.
//
// With the counts, the statement reads the span of cutoffs each holds for
// (the record times either side of the cutoff, two steps down that index),
// so a replica can answer from a tally it keeps (kept-reads.ts) until the
// cutoff, which moves with the clock, passes a record.

/**
 * The smallest string after every string that begins with the text of
 * `prefix` (an SQL expression): its last character raised by one, so that
 * `bucket > p AND bucket < after(q)` selects the buckets after p that begin
 * with q. Prefixes here are of toISOString() times (ASCII digits and
 * punctuation), whose last character can be raised.
 */
function after(prefix: string): string {
  return `(left(${prefix}, -1) || chr(ascii(right(${prefix}, 1)) + 1))`;
}

/** The text of a field when it is a non-empty JSON string, else '' (as the data dir's index reads it). */
function textOf(field: string): string {
  return `CASE WHEN jsonb_typeof(record->'${field}') = 'string' THEN record->>'${field}' ELSE '' END`;
}

/**
 * The tally statement for `spec`'s table: $1 the log, $2 the cutoffs
 * (toISOString() texts). One text for any number of cutoffs (prepared once
 * per connection). Field and table names come from the spec (constants of
 * this program), never from a request.
 */
export function tallyQuery(table: string, spec: KeyedLogSpec): string {
  const time = `(record->>'${spec.time}') COLLATE "C"`;
  const group = spec.tally ? textOf(spec.tally.by) : "''";
  const grouped = spec.tally
    ? `CASE WHEN g.grp <> '' THEN (SELECT array_agg(value) FROM tally_distinct d WHERE d.log = $1 AND d.grp = g.grp) END AS distinct_values, ` +
      `CASE WHEN g.grp <> '' THEN (SELECT record FROM ${table} n WHERE n.event_id = g.newest) END AS newest`
    : 'NULL AS distinct_values, NULL AS newest';
  return [
    'WITH c AS (SELECT i, at, left(at, 10) AS day, left(at, 13) AS hour, left(at, 16) AS minute, left(at, 19) AS second FROM unnest($2::text[]) WITH ORDINALITY AS c (at, i)),',
    'g AS (SELECT grp, count, newest, earliest FROM tally_groups WHERE log = $1),',
    // Per cutoff and group (all groups at once): the buckets after the cutoff, and the records of its second at or after it.
    's AS MATERIALIZED (',
    '  SELECT c.i, b.grp, b.n FROM c CROSS JOIN LATERAL (SELECT grp, sum(count) AS n FROM tally_buckets WHERE log = $1 AND (',
    '    (width = 10 AND bucket > c.day)',
    `    OR (width = 13 AND bucket > c.hour AND bucket < ${after('c.day')})`,
    `    OR (width = 16 AND bucket > c.minute AND bucket < ${after('c.hour')})`,
    `    OR (width = 19 AND bucket > c.second AND bucket < ${after('c.minute')})`,
    '  ) GROUP BY grp) AS b',
    '  UNION ALL',
    `  SELECT c.i, p.grp, p.n FROM c CROSS JOIN LATERAL (SELECT ${group} AS grp, count(*) AS n FROM ${table} WHERE ${time} >= c.at AND ${time} < ${after('c.second')} GROUP BY 1) AS p`,
    '),',
    'totals AS MATERIALIZED (SELECT i, grp, sum(n) AS n FROM s GROUP BY i, grp),',
    // Per cutoff: the record times either side of it.
    `spans AS (SELECT c.i, (SELECT max(${time}) FROM ${table} WHERE ${time} < c.at) AS after, (SELECT min(${time}) FROM ${table} WHERE ${time} >= c.at) AS up_to FROM c)`,
    'SELECT g.grp, g.count::text AS count, g.earliest,',
    '  ARRAY(SELECT coalesce(t.n, 0)::text FROM c LEFT JOIN totals t ON t.i = c.i AND t.grp = g.grp ORDER BY c.i) AS since,',
    `  ${grouped},`,
    '  (SELECT array_agg(after ORDER BY i) FROM spans) AS afters, (SELECT array_agg(up_to ORDER BY i) FROM spans) AS up_tos',
    'FROM g',
  ].join('\n');
}

/**
 * The tally of the log in `table` (see KeyedRecords.tally), from the counts
 * kept with it, and the spans of cutoffs it holds for. `ordered` puts a
 * stored record's fields in the data dir's order.
 */
export async function tallyOf(sql: Sql, table: string, spec: KeyedLogSpec, cutoffs: readonly Date[], ordered: (record: JsonRecord) => JsonRecord): Promise<SpannedTally> {
  const rows = await sql.unsafe(tallyQuery(table, spec), [table, cutoffs.map((c) => c.toISOString())], { prepare: true });
  const sinceOf = (row: Record<string, unknown>) => cutoffs.map((_, i) => Number((row.since as string[])[i] ?? 0));
  let count = 0;
  const since = cutoffs.map(() => 0);
  let earliest: string | null = null;
  const groups: TallyGroup[] = [];
  for (const row of rows) {
    count += Number(row.count);
    sinceOf(row).forEach((n, i) => (since[i] = (since[i] as number) + n));
    const first = row.earliest as string | null;
    if (first !== null && (earliest === null || first < earliest)) earliest = first;
    if (row.grp === '' || !row.newest) continue;
    const values = (row.distinct_values as string[] | null) ?? [];
    groups.push({ value: String(row.grp), count: Number(row.count), since: sinceOf(row), newest: ordered(row.newest as JsonRecord), distinct: [...values].sort() });
  }
  // Every row carries the same spans; no row (an empty log): no record bounds any cutoff.
  const top = rows[0];
  const afters = (top?.afters as (string | null)[] | undefined) ?? [];
  const upTos = (top?.up_tos as (string | null)[] | undefined) ?? [];
  const spans = cutoffs.map((_, i): [string | null, string | null] => [afters[i] ?? null, upTos[i] ?? null]);
  return { tally: { count, since, earliest, skipped: 0, groups }, spans };
}
