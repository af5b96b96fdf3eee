import type { EstateEvent } from './estate-events.ts';

// The events of a condition alternate (DESIGN.md 7c): a node goes stale and
// recovers, a pulse turns degraded, unhealthy or healthy again, a provider
// goes down and comes back. Two events in a row of one kind for one subject
// are one change told twice: a derivation that lost the condition's start
// (a window pruned, a silence dated again while a spool replays) firing it
// anew. The stored events are the conditions' state (what was noticed, in
// order); a derived event that repeats the kind before it is left out.

export type ConditionFamily = 'node' | 'pulse' | 'provider';

/** The condition an event of `kind` is a change of; undefined for the others (heartbeats, scores, schedules). */
export function familyOf(kind: string): ConditionFamily | undefined {
  if (kind === 'node_stale' || kind === 'node_recovered') return 'node';
  if (kind.startsWith('pulse_')) return 'pulse';
  if (kind.startsWith('provider_')) return 'provider';
  return undefined;
}

export interface Told {
  event: EstateEvent;
  stored: boolean;
}

/**
 * `events` (stored and derived, any order) without the derived ones that
 * repeat the kind just before them in their condition (family and subject,
 * oldest first; at one time, stored first): a stored event is always kept,
 * and a derived one it follows with the same kind goes. Events of no
 * condition pass as they are.
 *
 * @example
 *   withoutRepeats([stored(node_stale 10:15), derived(node_stale 10:17)]) // the stored one alone
 */
export function withoutRepeats(events: readonly Told[]): Told[] {
  const out: Told[] = [];
  const groups = new Map<string, Told[]>();
  for (const t of events) {
    const family = familyOf(t.event.kind);
    if (!family) out.push(t);
    else {
      const key = JSON.stringify([family, t.event.subject]);
      const group = groups.get(key);
      if (group) group.push(t);
      else groups.set(key, [t]);
    }
  }
  for (const group of groups.values()) {
    group.sort((a, b) => (a.event.ts < b.event.ts ? -1 : a.event.ts > b.event.ts ? 1 : Number(b.stored) - Number(a.stored)));
    const kept: Told[] = [];
    for (const t of group) {
      const last = kept.at(-1);
      if (last && last.event.kind === t.event.kind) {
        if (!t.stored) continue;
        if (!last.stored) kept.pop();
      }
      kept.push(t);
    }
    out.push(...kept);
  }
  return out;
}
