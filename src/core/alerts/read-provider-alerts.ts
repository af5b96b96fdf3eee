import type { ProviderProbes } from '../store/store.ts';
import { windowInitial, windowSpanningHold, type Observation } from './held-conditions.ts';
import { type ProviderAlert, providerAlerts, probeObservation, type ProviderState } from './provider-alerts.ts';
import { PULSE_ALERT_WINDOW, PULSE_ALERT_WINDOWS } from './read-pulse-alerts.ts';

/** The newest probes of each provider that its alerts are derived from (through the provider's index: no scan). */
export const PROVIDER_ALERT_WINDOW = PULSE_ALERT_WINDOW;

/**
 * The alerts of every provider named (the config's), each from its newest
 * PROVIDER_ALERT_WINDOW stored probes, more while they span less than
 * twice the hold (as the pulse's), through providerAlerts and windowInitial.
 */
export async function allProviderAlerts(probes: Pick<ProviderProbes, 'newest'>, providers: readonly string[], holdMs: number, now: Date): Promise<ProviderAlert[]> {
  const pages = await Promise.all(
    providers.map((name) =>
      windowSpanningHold<Observation<ProviderState> | undefined>(PULSE_ALERT_WINDOWS, holdMs, (o) => o?.ms, async (limit) => {
        const records = await probes.newest(name, limit);
        return { items: records.map(probeObservation), full: records.length >= limit };
      }),
    ),
  );
  return providers.flatMap((name, i) => {
    const page = pages[i] as { items: (Observation<ProviderState> | undefined)[]; limit: number };
    const observations = page.items.filter((o): o is Observation<ProviderState> => o !== undefined);
    observations.sort((a, b) => a.ms - b.ms);
    return providerAlerts(name, observations, holdMs, now.getTime(), windowInitial(observations, 'up', page.limit));
  });
}
