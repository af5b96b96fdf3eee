import type { JsonRecord } from '../jsonl/parse-record.ts';

/**
 * One probe of a configured provider, as `estate serve` stores it
 * (probe-providers.ts): when, which provider, whether it was reachable, the
 * HTTP status it answered (null when it did not), the latency (null on a
 * timeout) and why it was not reachable (`timeout`, `status 502`,
 * `connection refused`: probeReason). Known by (provider, ts).
 */
export interface ProviderProbe {
  ts: string;
  provider: string;
  reachable: boolean;
  status: number | null;
  latency_ms: number | null;
  error: string | null;
}

const nullable = (v: unknown, type: 'number' | 'string') => v === null || typeof v === type;

/** Whether a stored record is a probe: the fields above, each of its type (other fields are kept). */
export function isProbeRecord(record: JsonRecord): boolean {
  return (
    typeof record.ts === 'string' &&
    typeof record.provider === 'string' &&
    typeof record.reachable === 'boolean' &&
    nullable(record.status ?? null, 'number') &&
    nullable(record.latency_ms ?? null, 'number') &&
    nullable(record.error ?? null, 'string')
  );
}

/**
 * A probe's identity: its provider and `ts`, each but the last after its length.
 *
 * @example
 *   probeKey({ provider: 'ollama', ts: '2026-12-01T10:00:00.000Z' }) // '6:ollama2026-12-01T10:00:00.000Z'
 */
export function probeKey(record: { provider?: unknown; ts?: unknown }): string | undefined {
  const { provider, ts } = record;
  return typeof provider === 'string' && typeof ts === 'string' ? `${provider.length}:${provider}${ts}` : undefined;
}
