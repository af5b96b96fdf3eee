import type { JsonRecord } from '../../jsonl/parse-record.ts';
import type { KeyedLogSpec } from '../../keyed-log.ts';
import type { Tally, TallyGroup } from '../store.ts';
import type { Sql } from './connect.ts';

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

/** Widths of the buckets: day, hour, minute, second (prefixes of an ISO 8601 time). */
const WIDTHS = [10, 13, 16, 19] as const;

/**
 * The smallest string after every string that begins with `prefix` (its last
 * character raised by one): `bucket > p AND bucket < after(q)` selects the
 * buckets after p that begin with q. Prefixes here are of toISOString()
 * times (ASCII digits and punctuation), whose last character can be raised.
 */
function after(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

/** The text of a field when it is a non-empty JSON string, else '' (as the data dir's index reads it). */
function textOf(field: string): string {
  return `CASE WHEN jsonb_typeof(record->'${field}') = 'string' THEN record->>'${field}' ELSE '' END`;
}

/**
 * The tally statement for `spec`'s table and `cutoffs` cutoffs, with its
 * parameters: $1 the log, then per cutoff its time and prefixes. Field and
 * table names come from the spec (constants of this program), never from a
 * request.
 */
function tallyQuery(table: string, spec: KeyedLogSpec, cutoffs: readonly Date[]): { text: string; params: string[] } {
  const params = [table];
  const param = (value: string) => `$${params.push(value)}`;
  const time = `(record->>'${spec.time}') COLLATE "C"`;
  const group = spec.tally ? textOf(spec.tally.by) : "''";
  const inBuckets: string[] = [];
  const inSecond: string[] = [];
  for (const cutoff of cutoffs) {
    const c = cutoff.toISOString();
    const [day, hour, minute, second] = WIDTHS.map((w) => c.slice(0, w)) as [string, string, string, string];
    inBuckets.push(
      `(width = 10 AND bucket > ${param(day)}) OR ` +
        `(width = 13 AND bucket > ${param(hour)} AND bucket < ${param(after(day))}) OR ` +
        `(width = 16 AND bucket > ${param(minute)} AND bucket < ${param(after(hour))}) OR ` +
        `(width = 19 AND bucket > ${param(second)} AND bucket < ${param(after(minute))})`,
    );
    inSecond.push(`${time} >= ${param(c)} AND ${time} < ${param(after(second))}`);
  }
  const sums = (conditions: string[]) => conditions.map((cond, i) => `, sum(count) FILTER (WHERE ${cond}) AS s${i}`).join('');
  const counts = (conditions: string[]) => conditions.map((cond, i) => `, count(*) FILTER (WHERE ${cond}) AS s${i}`).join('');
  const any = (conditions: string[]) => conditions.map((c) => `(${c})`).join(' OR ') || 'false';
  const since = cutoffs.map((_, i) => `, coalesce(b.s${i}, 0) + coalesce(p.s${i}, 0) AS s${i}`).join('');
  const grouped = spec.tally
    ? `CASE WHEN g.grp <> '' THEN (SELECT array_agg(value) FROM tally_distinct d WHERE d.log = $1 AND d.grp = g.grp) END AS distinct_values, ` +
      `CASE WHEN g.grp <> '' THEN (SELECT record FROM ${table} n WHERE n.event_id = g.newest) END AS newest`
    : 'NULL AS distinct_values, NULL AS newest';
  const text =
    `WITH g AS (SELECT grp, count, newest, earliest FROM tally_groups WHERE log = $1), ` +
    `b AS (SELECT grp${sums(inBuckets)} FROM tally_buckets WHERE log = $1 AND (${any(inBuckets)}) GROUP BY grp), ` +
    `p AS (SELECT ${group} AS grp${counts(inSecond)} FROM ${table} WHERE ${any(inSecond)} GROUP BY 1) ` +
    `SELECT g.grp, g.count::text AS count, g.earliest${since}, ${grouped} ` +
    'FROM g LEFT JOIN b ON b.grp = g.grp LEFT JOIN p ON p.grp = g.grp';
  return { text, params };
}

/**
 * The tally of the log in `table` (see KeyedRecords.tally), from the counts
 * kept with it. `ordered` puts a stored record's fields in the data dir's order.
 */
export async function tallyOf(sql: Sql, table: string, spec: KeyedLogSpec, cutoffs: readonly Date[], ordered: (record: JsonRecord) => JsonRecord): Promise<Tally> {
  const { text, params } = tallyQuery(table, spec, cutoffs);
  const rows = await sql.unsafe(text, params, { prepare: true });
  const sinceOf = (row: Record<string, unknown>) => cutoffs.map((_, i) => Number(row[`s${i}`] ?? 0));
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
  return { count, since, earliest, skipped: 0, groups };
}
