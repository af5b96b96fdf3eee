import type { ProviderStatus } from '../providers.ts';

/** Network errors as an event says them. */
const NETWORK: readonly (readonly [RegExp, string])[] = [
  [/ECONNREFUSED/, 'connection refused'],
  [/ECONNRESET|socket hang up|other side closed/i, 'connection reset'],
  [/ENOTFOUND|EAI_AGAIN/, 'host not found'],
  [/EHOSTUNREACH|ENETUNREACH/, 'host unreachable'],
  [/certificate|CERT_|SSL|TLS/i, 'TLS error'],
];

/**
 * Why a checked provider was not reachable, in a few bounded words:
 * `timeout`, `status 502` (`status 404, expected 200`), `connection
 * refused`, `connection reset`, `host not found`, `host unreachable`, `TLS
 * error`, else `unreachable`; null when it was reachable.
 *
 * @example
 *   probeReason({ reachable: false, status: 502, latency_ms: 3, error: 'answered 502' }) // 'status 502'
 */
export function probeReason(status: Pick<ProviderStatus, 'reachable' | 'status' | 'latency_ms' | 'error'>): string | null {
  if (status.reachable) return null;
  if (status.status !== null) {
    const expected = /expected (\d+)/.exec(status.error ?? '')?.[1];
    return expected ? `status ${status.status}, expected ${expected}` : `status ${status.status}`;
  }
  if (status.latency_ms === null) return 'timeout';
  const error = status.error ?? '';
  return NETWORK.find(([pattern]) => pattern.test(error))?.[1] ?? 'unreachable';
}
