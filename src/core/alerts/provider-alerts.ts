import type { JsonRecord } from '../jsonl/parse-record.ts';
import { heldChanges, heldText, type Observation } from './held-conditions.ts';

// Alerts on the providers (DESIGN.md 7c): a configured provider becoming
// unreachable, and reachable again, as events, derived from its stored
// probes (store.probes) with the same hold as the pulse's (heldChanges).

export type ProviderState = 'up' | 'down';

export interface ProviderAlert {
  ts: string;
  kind: 'provider_down' | 'provider_recovered';
  subject: string;
  message: string;
}

/**
 * The alerts of `provider`'s probes (oldest first) up to `nowMs`: it starts
 * up (or as `initial`: see allProviderAlerts), and each state that holds for
 * `holdMs` fires once, the down one naming the error by then.
 */
export function providerAlerts(provider: string, probes: readonly Observation<ProviderState>[], holdMs: number, nowMs: number, initial: ProviderState = 'up'): ProviderAlert[] {
  const held = heldText(holdMs);
  return heldChanges(probes, initial, holdMs, nowMs).map((c) => ({
    ts: new Date(c.ms).toISOString(),
    kind: c.state === 'down' ? 'provider_down' : 'provider_recovered',
    subject: provider,
    message:
      c.state === 'down'
        ? `${provider} is down${held}${c.detail.length ? `: ${c.detail.join(', ')}` : ''}`
        : `${provider} is reachable again${held}${c.before.length ? ` (was: ${c.before.join(', ')})` : ''}`,
  }));
}

/** A stored probe as an observation (its error the detail), or undefined when it has no time. */
export function probeObservation(record: JsonRecord): Observation<ProviderState> | undefined {
  const ms = typeof record.ts === 'string' ? Date.parse(record.ts) : Number.NaN;
  if (!Number.isFinite(ms) || typeof record.reachable !== 'boolean') return undefined;
  if (record.reachable) return { ms, state: 'up', detail: [] };
  return { ms, state: 'down', detail: [typeof record.error === 'string' && record.error ? record.error : 'unreachable'] };
}
