import { BucketSums } from '../../rollups/bucket-sums.ts';
import { chooseTier } from '../../rollups/choose-tier.ts';
import { rangeStep } from '../../rollups/range-step.ts';
import { ROLLUP_TIERS, type RangeAnswer, type RangeQuery, type RangeSeries, type RollupRetention, type Tier } from '../../rollups/range-types.ts';
import type { Series } from '../store.ts';
import { transaction, withinDeadline, type Sql, type TransactionSql } from './connect.ts';

// The range routes (DESIGN.md 7b) on PostgreSQL: the rollups are rows of
// `series_rollups` (migration 5) that a trigger keeps in each insert's
// transaction, whoever inserts; the raw tier is summed up in SQL from the rows
// whose series_ts_time(ts) is in the range (its index: migration 4).

const TABLE: Readonly<Record<RangeSeries, string>> = { trends: 'series_trends', disk: 'series_disk' };

/** First key of the advisory lock of a rebuild or a retention of a series' rollups ("esro"). */
const ROLLUP_LOCK = 0x6573726f;
const SERIES_ID: Readonly<Record<RangeSeries, number>> = { trends: 1, disk: 2 };

/** How often a server applies the rollups' retention. */
const PRUNE_EVERY_MS = 60 * 60 * 1000;

interface SumRow {
  k: string | number;
  field: string;
  n: string | number;
  sum: number;
  min: number;
  max: number;
}

type RollupMethods = Pick<Series, 'range' | 'rebuildRollups' | 'followRollups'>;

/** The sums of `rows` (a bucket's start in ms `k`, per field; field '' the samples) as an answer. */
function answerOf(query: RangeQuery, stepS: number, tier: Tier, rows: readonly SumRow[]): RangeAnswer {
  const sums = new BucketSums(stepS, query.fields);
  const byBucket = new Map<number, { n: number; f: Record<string, [number, number, number, number]> }>();
  for (const row of rows) {
    const b = Number(row.k);
    let bucket = byBucket.get(b);
    if (!bucket) byBucket.set(b, (bucket = { n: 0, f: {} }));
    if (row.field === '') bucket.n += Number(row.n);
    else bucket.f[row.field] = [Number(row.n), Number(row.sum), Number(row.min), Number(row.max)];
  }
  for (const [b, bucket] of byBucket) sums.addRollup({ b: b / 1000, n: bucket.n, f: bucket.f });
  return { from: new Date(query.fromMs).toISOString(), to: new Date(query.toMs).toISOString(), step_s: stepS, tier, items: sums.items() };
}

/** The range methods of a PostgreSQL store's Series; `store` names it in errors. */
export function postgresRollups(sql: Sql, store: string, retention: RollupRetention): RollupMethods {
  const filters = (query: RangeQuery, series: RangeSeries, params: unknown[], node: string, mount: string): string => {
    let where = '';
    if (query.node !== undefined) {
      params.push(query.node);
      where += ` AND ${node} = $${params.length}`;
    }
    if (series === 'disk' && query.mount !== undefined) {
      params.push(query.mount);
      where += ` AND ${mount} = $${params.length}`;
    }
    return where;
  };
  const fieldFilter = (query: RangeQuery, params: unknown[], column: string): string => {
    if (!query.fields) return '';
    params.push(['', ...query.fields]);
    return ` AND ${column} = ANY($${params.length}::text[])`;
  };

  const coverage = async (series: RangeSeries) => {
    const [row] = await sql.unsafe(
      `SELECT (SELECT min(series_ts_time(ts)) FROM ${TABLE[series]}) AS raw,
        (SELECT min(bucket) FROM series_rollups WHERE series = $1 AND tier = '1m') AS m,
        (SELECT min(bucket) FROM series_rollups WHERE series = $1 AND tier = '1h') AS h`,
      [series],
    );
    const ms = (v: unknown) => (v instanceof Date ? v.getTime() : undefined);
    return { raw: ms(row?.raw), '1m': ms(row?.m), '1h': ms(row?.h) };
  };

  return {
    range: (series, query) =>
      withinDeadline(store, async () => {
        const nowMs = query.nowMs ?? Date.now();
        const step = rangeStep(query.fromMs, query.toMs, query.points);
        const held = await coverage(series);
        const { tier, stepS } = chooseTier(query.fromMs, query.toMs, query.points, step, {
          rawOldestMs: held.raw,
          rollups: { '1m': { oldestMs: held['1m'] }, '1h': { oldestMs: held['1h'] } },
          retention,
          nowMs,
        });
        const stepMs = stepS * 1000;
        const params: unknown[] = [new Date(query.fromMs).toISOString(), new Date(query.toMs).toISOString(), stepMs];
        if (tier === 'raw') {
          const where = filters(query, series, params, 'node', "(CASE WHEN json_typeof(record->'mount') = 'string' THEN record->>'mount' END)");
          const fields = fieldFilter(query, params, 'v.field');
          const rows = await sql.unsafe(
            `SELECT floor(extract(epoch FROM s.at) * 1000 / $3) * $3 AS k, v.field, count(*) AS n, sum(v.value) AS sum, min(v.value) AS min, max(v.value) AS max
             FROM (SELECT series_ts_time(ts) AS at, record FROM ${TABLE[series]} WHERE series_ts_time(ts) >= $1 AND series_ts_time(ts) < $2${where}) s
             CROSS JOIN LATERAL (SELECT '' AS field, 0::float8 AS value UNION ALL SELECT e.key, series_measure(e.value) FROM json_each(s.record) e WHERE series_measure(e.value) IS NOT NULL) v
             WHERE true${fields}
             GROUP BY 1, 2`,
            params as never[],
          );
          return answerOf(query, stepS, tier, rows as unknown as SumRow[]);
        }
        const width = (ROLLUP_TIERS.find((t) => t.tier === tier) as { width: number }).width;
        params.push(series, tier, width);
        const at = params.length;
        const where = filters(query, series, params, 'node', 'mount');
        const fields = fieldFilter(query, params, 'field');
        const rows = await sql.unsafe(
          `SELECT floor(extract(epoch FROM bucket) * 1000 / $3) * $3 AS k, field, sum(n) AS n, sum(sum) AS sum, min(min) AS min, max(max) AS max
           FROM series_rollups
           WHERE series = $${at - 2} AND tier = $${at - 1} AND bucket > $1::timestamptz - make_interval(secs => $${at}) AND bucket < $2${where}${fields}
           GROUP BY 1, 2`,
          params as never[],
        );
        return answerOf(query, stepS, tier, rows as unknown as SumRow[]);
      }),

    rebuildRollups: async (series) => {
      // Long on a big table: no statement timeout; inserts into the series wait for it (SHARE lock), reads go on.
      const result = await transaction(sql, async (tx) => {
        await tx`SET LOCAL statement_timeout = 0`;
        await tx`SELECT pg_advisory_xact_lock(${ROLLUP_LOCK}, ${SERIES_ID[series]})`;
        await tx.unsafe(`LOCK TABLE ${TABLE[series]} IN SHARE MODE`);
        const [oldest] = await tx.unsafe(`SELECT min(series_ts_time(ts)) AS at, count(*) AS n FROM ${TABLE[series]}`);
        const at = oldest?.at instanceof Date ? oldest.at.toISOString() : null;
        if (at !== null) {
          for (const { tier, width } of ROLLUP_TIERS) {
            await tx.unsafe(`DELETE FROM series_rollups WHERE series = $1 AND tier = $2 AND bucket >= to_timestamp(floor(extract(epoch FROM $3::timestamptz) / $4) * $4)`, [series, tier, at, width]);
          }
          await tx.unsafe(
            `INSERT INTO series_rollups (series, tier, bucket, node, mount, field, n, sum, min, max)
             SELECT $1, x.tier, x.bucket, x.node, x.mount, x.field, count(*), sum(x.value), min(x.value), max(x.value)
             FROM ${TABLE[series]} s CROSS JOIN LATERAL series_rollup_rows($1, s.node, s.ts, s.record) x
             GROUP BY x.tier, x.bucket, x.node, x.mount, x.field`,
            [series],
          );
        }
        const pruned = await pruneRollups(tx, series, retention, Date.now());
        return { records: Number(oldest?.n ?? 0), pruned };
      });
      return { records: result.records, periods: 0, pruned: result.pruned };
    },

    followRollups: async (report) => {
      const prune = async () => {
        for (const series of ['trends', 'disk'] as const) {
          try {
            await withinDeadline(store, () => transaction(sql, async (tx) => {
              const [lock] = await tx`SELECT pg_try_advisory_xact_lock(${ROLLUP_LOCK}, ${SERIES_ID[series]}) AS held`;
              if (lock?.held) await pruneRollups(tx, series, retention, Date.now());
            }));
          } catch (err) {
            report.failed(series, err);
          }
        }
      };
      let pass: Promise<void> | undefined = prune();
      const timer = setInterval(() => {
        pass ??= prune().finally(() => (pass = undefined));
      }, PRUNE_EVERY_MS);
      timer.unref();
      const first = pass.finally(() => (pass = undefined));
      return {
        ready: first,
        stop: async () => {
          clearInterval(timer);
          await pass;
        },
      };
    },
  };
}

/** Deletes the rollup rows of `series` older than each tier's retention; answers how many. */
async function pruneRollups(tx: TransactionSql, series: RangeSeries, retention: RollupRetention, nowMs: number): Promise<number> {
  let removed = 0;
  for (const { tier } of ROLLUP_TIERS) {
    const rows = await tx.unsafe(`WITH gone AS (DELETE FROM series_rollups WHERE series = $1 AND tier = $2 AND bucket < $3 RETURNING 1) SELECT count(*)::int AS n FROM gone`, [
      series,
      tier,
      new Date(nowMs - retention[tier]).toISOString(),
    ]);
    removed += Number(rows[0]?.n ?? 0);
  }
  return removed;
}
