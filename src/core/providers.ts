import { performance } from 'node:perf_hooks';
import type { ProviderConfig } from '../config.ts';
import type { SourceContext } from './external-sources.ts';
import { fetchFailure } from './fetch-failure.ts';
import { observeExternal, observing } from './observe.ts';

export interface ProviderStatus {
  name: string;
  url: string;
  /** It answered: with `expect_status` when one is configured, else with any status below 500. */
  reachable: boolean;
  /** The HTTP status it answered with; null when it did not answer. */
  status: number | null;
  /** Until the status line and headers arrived (or the failure); null when it timed out. */
  latency_ms: number | null;
  error: string | null;
  checked_at: string;
}

export interface ProviderReport {
  items: ProviderStatus[];
  count: number;
  reachable: number;
  unreachable: number;
  checked_at: string;
  /** How long this check took in all (about the slowest provider's timeout at most). */
  duration_ms: number;
}

/**
 * The reachability of every configured provider, kept for
 * `providers_cache_s` seconds; concurrent calls share one check.
 */
export function providerReport(ctx: SourceContext): Promise<ProviderReport> {
  return ctx.sources.providers.get('providers', () => checkProviders(ctx.config.providers, ctx.now));
}

/**
 * Checks every provider at once, each bounded by its own `timeout_ms`, so
 * the whole check takes about the slowest timeout, not their sum. Never
 * throws: a failure is that provider's `error`.
 */
export async function checkProviders(providers: readonly ProviderConfig[], now: () => Date): Promise<ProviderReport> {
  const started = performance.now();
  const items = await Promise.all(providers.map((p) => checkProvider(p, now)));
  const reachable = items.filter((i) => i.reachable).length;
  return {
    items,
    count: items.length,
    reachable,
    unreachable: items.length - reachable,
    checked_at: now().toISOString(),
    duration_ms: Math.round(performance.now() - started),
  };
}

/** checkProvider, observed for the metrics (observe.ts): how long, and whether it was reachable, failed or timed out. */
export async function checkProvider(provider: ProviderConfig, now: () => Date): Promise<ProviderStatus> {
  const started = observing('external');
  const status = await checkOne(provider, now);
  observeExternal(started, 'providers', status.reachable ? 'ok' : status.status === null && status.latency_ms === null ? 'timeout' : 'error');
  return status;
}

async function checkOne(provider: ProviderConfig, now: () => Date): Promise<ProviderStatus> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const base = { name: provider.name, url: provider.url };
  try {
    const response = await fetch(provider.url, {
      headers: { Accept: 'application/json' },
      redirect: 'manual',
      signal: AbortSignal.timeout(provider.timeout_ms),
    });
    const latency = elapsed();
    // Only the status matters: drop the body so the connection is released.
    await response.body?.cancel().catch(() => {});
    const expected = provider.expect_status;
    const reachable = expected === undefined ? response.status < 500 : response.status === expected;
    const error = reachable ? null : expected === undefined ? `answered ${response.status}` : `answered ${response.status}, expected ${expected}`;
    return { ...base, reachable, status: response.status, latency_ms: latency, error, checked_at: now().toISOString() };
  } catch (err) {
    const { timedOut, reason } = fetchFailure(err);
    return {
      ...base,
      reachable: false,
      status: null,
      latency_ms: timedOut ? null : elapsed(),
      error: timedOut ? `did not answer within ${provider.timeout_ms} ms` : `unreachable: ${reason}`,
      checked_at: now().toISOString(),
    };
  }
}
