import type { JsonRecord } from '../../jsonl/parse-record.ts';
import { isProbeRecord } from '../../probes/provider-probe.ts';
import type { ProviderProbes } from '../store.ts';
import { withinDeadline, type Sql } from './connect.ts';

// The provider probes in PostgreSQL (migration 7 in migrations.ts): one row
// per probe in `provider_probes`, unique by (provider, ts), `record` the
// probe as it came (json: its fields in their order), `seq` the write order;
// an index on (provider, seq) reads one provider's newest rows.

/** Inserts the probes of `$1` (a JSON list) in their order, each once by (provider, ts); answers the rows inserted. */
const INSERT = `INSERT INTO provider_probes (provider, ts, record)
SELECT a.x->>'provider', a.x->>'ts', a.x FROM json_array_elements($1::text::json) WITH ORDINALITY AS a(x, n)
ORDER BY a.n
ON CONFLICT DO NOTHING
RETURNING seq`;

/** The ProviderProbes of a PostgreSQL store; `store` names it in errors. */
export function postgresProbes(sql: Sql, store: string): ProviderProbes {
  const insert = async (records: readonly object[]): Promise<number> => {
    if (records.length === 0) return 0;
    const rows = await withinDeadline(store, () => sql.unsafe(INSERT, [JSON.stringify(records)], { prepare: true }));
    return rows.length;
  };
  return {
    append: async (probes) => {
      await insert(probes);
    },
    newest: async (provider, limit) => {
      if (limit <= 0) return [];
      const rows = await withinDeadline(store, () => sql`SELECT record FROM provider_probes WHERE provider = ${provider} ORDER BY seq DESC LIMIT ${limit}`);
      return rows.map((r) => r.record as JsonRecord);
    },
    pages: async function* (pageSize) {
      let cursor = '0';
      for (;;) {
        const from = cursor;
        const rows = await withinDeadline(store, () => sql`SELECT seq::text AS after, record FROM provider_probes WHERE seq > ${from} ORDER BY seq LIMIT ${pageSize}`);
        const last = rows.at(-1);
        if (!last) return;
        cursor = String(last.after);
        yield { records: rows.map((r) => r.record as JsonRecord), skipped: 0 };
        if (rows.length < pageSize) return;
      }
    },
    restore: async (records) => {
      const probes = records.filter(isProbeRecord);
      const created = await insert(probes);
      return { created, present: probes.length - created };
    },
    prune: async (before) => {
      // Probes' times are what Date.toISOString writes (probe-providers.ts), so text order is time order.
      const rows = await withinDeadline(store, () => sql`DELETE FROM provider_probes WHERE ts < ${before.toISOString()} RETURNING seq`);
      return rows.length;
    },
  };
}
