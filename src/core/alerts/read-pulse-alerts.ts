import type { Series } from '../store/store.ts';
import { windowInitial } from './held-conditions.ts';
import { type PulseAlert, type PulseEntry, pulseAlerts, pulseEntryOf } from './pulse-alerts.ts';

/** The newest pulse entries of each node that its alerts are derived from (through the node's index: no scan of the log). */
export const PULSE_ALERT_WINDOW = 200;

/**
 * The pulse alerts of every node of the store (pulseAlerts), each from its
 * newest PULSE_ALERT_WINDOW entries; entries without a node are
 * `thisNode`'s (DESIGN.md 7c).
 */
export async function allPulseAlerts(series: Pick<Series, 'nodes' | 'newest'>, holdMs: number, thisNode: string, now: Date): Promise<PulseAlert[]> {
  const [nodes, unnamed] = await Promise.all([series.nodes(), series.newest('pulse', PULSE_ALERT_WINDOW)]);
  const byNode = new Map<string, PulseEntry[]>();
  const add = (node: string, record: Record<string, unknown>) => {
    const entry = pulseEntryOf(record);
    if (!entry) return;
    const list = byNode.get(node) ?? [];
    list.push(entry);
    byNode.set(node, list);
  };
  for (const record of unnamed.items) if (typeof record.node !== 'string') add(thisNode, record);
  const pages = await Promise.all(nodes.map((node) => series.newest('pulse', PULSE_ALERT_WINDOW, { node })));
  nodes.forEach((node, i) => {
    for (const record of pages[i]?.items ?? []) add(node, record);
  });
  const alerts: PulseAlert[] = [];
  for (const [node, entries] of byNode) {
    entries.sort((a, b) => a.ms - b.ms);
    // A full window starts in the state of its first entry (windowInitial): an older condition does not fire again as the window slides.
    const initial = windowInitial(entries.map((e) => ({ ms: e.ms, state: e.status, detail: e.failing })), 'healthy', PULSE_ALERT_WINDOW);
    alerts.push(...pulseAlerts(node, entries, holdMs, now.getTime(), initial));
  }
  return alerts;
}
