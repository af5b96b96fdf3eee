import type { ProviderProbes } from '../store/store.ts';
import { windowInitial, type Observation } from './held-conditions.ts';
import { type ProviderAlert, providerAlerts, probeObservation, type ProviderState } from './provider-alerts.ts';
import { PULSE_ALERT_WINDOW } from './read-pulse-alerts.ts';

/** The newest probes of each provider that its alerts are derived from (through the provider's index: no scan). */
export const PROVIDER_ALERT_WINDOW = PULSE_ALERT_WINDOW;

/**
 * The alerts of every provider named (the config's), each from its newest
 * PROVIDER_ALERT_WINDOW stored probes (providerAlerts, windowInitial).
 */
export async function allProviderAlerts(probes: Pick<ProviderProbes, 'newest'>, providers: readonly string[], holdMs: number, now: Date): Promise<ProviderAlert[]> {
  const pages = await Promise.all(providers.map((name) => probes.newest(name, PROVIDER_ALERT_WINDOW)));
  return providers.flatMap((name, i) => {
    const observations = (pages[i] ?? []).map(probeObservation).filter((o): o is Observation<ProviderState> => o !== undefined);
    observations.sort((a, b) => a.ms - b.ms);
    return providerAlerts(name, observations, holdMs, now.getTime(), windowInitial(observations, 'up', PROVIDER_ALERT_WINDOW));
  });
}
