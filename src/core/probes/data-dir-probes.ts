import { dataPath } from '../data-files.ts';
import type { JsonRecord } from '../jsonl/parse-record.ts';
import { recordPages } from '../jsonl/record-pages.ts';
import { RecordLog } from '../record-log.ts';
import { pruneFile } from '../retention/prune-file.ts';
import type { ProviderProbes, RecordPage } from '../store/store.ts';
import { isProbeRecord, probeKey, type ProviderProbe } from './provider-probe.ts';

/** The index facet of a probe's provider. */
const PROVIDER = 'provider';

/**
 * The data dir's provider probes: `providers/probes.jsonl`, a RecordLog
 * (durable batched appends under `<file>.lock`, an index with the facet
 * `provider`), each probe once by (provider, ts), so a provider's newest
 * probes are read without reading the others'.
 */
export function dataDirProbes(dataDir: string): ProviderProbes {
  const file = dataPath(dataDir, 'probes');
  const log = new RecordLog({
    file,
    accept: isProbeRecord,
    key: probeKey,
    facets: { [PROVIDER]: (r) => (typeof r.provider === 'string' ? r.provider : undefined) },
    fields: ['ts', 'provider', 'reachable', 'status', 'latency_ms', 'error'],
  });
  const store = (records: readonly JsonRecord[]) =>
    log.appendAll(
      records.map((record) => ({
        key: probeKey(record) as string,
        same: (stored: JsonRecord) => JSON.stringify(stored) === JSON.stringify(record),
        create: () => record,
      })),
    );
  return {
    append: async (probes: readonly ProviderProbe[]) => {
      await store(probes as unknown as JsonRecord[]);
    },
    newest: async (provider, limit) => (await log.newest(limit, { facet: PROVIDER, value: provider })).records,
    pages: (pageSize: number): AsyncIterable<RecordPage> => recordPages(file, isProbeRecord, pageSize),
    restore: async (records) => {
      const probes = records.filter((r) => isProbeRecord(r) && probeKey(r) !== undefined);
      const results = await store(probes);
      const created = results.filter((r) => r.outcome === 'created').length;
      return { created, present: results.length - created };
    },
    prune: async (before) => (await pruneFile(file, before)).dropped,
  };
}
