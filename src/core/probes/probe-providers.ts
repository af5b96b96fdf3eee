import type { ProviderConfig } from '../../config.ts';
import { checkProviders } from '../providers.ts';
import type { ProviderProbes } from '../store/store.ts';
import { probeReason } from './probe-reason.ts';
import type { ProviderProbe } from './provider-probe.ts';

/** How long the probes are kept: estate serve drops older ones (its events need the newest 200 of each provider). */
export const PROBE_RETENTION_MS = 30 * 86_400_000;
/** How often estate serve drops the probes past PROBE_RETENTION_MS. */
const PRUNE_EVERY_MS = 3_600_000;

export interface ProbeReport {
  /** A round whose probes could not be stored (the store unreachable): the next round tries again. */
  failed: (err: unknown) => void;
}

export interface ProviderProber {
  /** Stops the rounds and waits for one under way. */
  stop(): Promise<void>;
}

/**
 * Checks every provider (checkProviders: each within its `timeout_ms`) and
 * stores one probe per provider, `ts` the check's end, the reason named
 * (probeReason). Answers the probes stored.
 */
export async function probeProviders(providers: readonly ProviderConfig[], probes: Pick<ProviderProbes, 'append'>, now: () => Date): Promise<ProviderProbe[]> {
  const report = await checkProviders(providers, now);
  const records = report.items.map(
    (item): ProviderProbe => ({ ts: item.checked_at, provider: item.name, reachable: item.reachable, status: item.status, latency_ms: item.latency_ms, error: probeReason(item) }),
  );
  await probes.append(records);
  return records;
}

/**
 * What `estate serve` runs when providers are configured and
 * `providers_probe_s` is not 0: a round of probes now, then one every
 * `intervalMs` after the last ended (never two at once), each stored
 * through the store, so /events derives provider_down and
 * provider_recovered from them; the probes older than PROBE_RETENTION_MS
 * are dropped at the first round and hourly. The timer does not keep the
 * process alive.
 */
export function startProviderProbes(providers: readonly ProviderConfig[], probes: Pick<ProviderProbes, 'append' | 'prune'>, intervalMs: number, now: () => Date, report: ProbeReport): ProviderProber {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<void> | undefined;
  let prunedAt = -Infinity;
  const run = () => {
    timer = undefined;
    if (stopped) return;
    const due = now().getTime() - prunedAt >= PRUNE_EVERY_MS;
    if (due) prunedAt = now().getTime();
    round = probeProviders(providers, probes, now)
      .then(async () => {
        if (due) await probes.prune(new Date(now().getTime() - PROBE_RETENTION_MS));
      })
      .then(
        () => {},
        (err: unknown) => report.failed(err),
      )
      .finally(() => {
        round = undefined;
        if (!stopped) {
          timer = setTimeout(run, intervalMs);
          timer.unref();
        }
      });
  };
  run();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await round;
    },
  };
}
