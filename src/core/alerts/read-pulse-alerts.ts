import { plainWindows, type SeriesWindows } from '../series/series-windows.ts';
import type { Series } from '../store/store.ts';
import { windowSpanningHold } from './held-conditions.ts';
import { type PulseAlert, type PulseEntry, pulseAlerts, pulseEntryOf } from './pulse-alerts.ts';

/** The newest pulse entries of each node that its alerts are derived from (through the node's index: no scan of the log). */
export const PULSE_ALERT_WINDOW = 200;

/**
 * The windows a node's grows through, each 4× the one before, while a full
 * one spans less than twice the hold: a spell is seen from its start when
 * its hold runs out, however long the hold (up to 12,800 entries: 8.9 days
 * at the collector's 60 s, 35 h at 10 s).
 */
export const PULSE_ALERT_WINDOWS = [PULSE_ALERT_WINDOW, 800, 3200, 12_800] as const;

/**
 * The pulse alerts of every node of the store (pulseAlerts), each from its
 * newest PULSE_ALERT_WINDOW entries; entries without a node are
 * `thisNode`'s (DESIGN.md 7c). A node's window grows while it spans less
 * than twice the hold (PULSE_ALERT_WINDOWS). A node with a full window may have older
 * entries: its first run is taken as fired before the window (pulseAlerts'
 * `initial`), so its events stay put as the window moves on.
 */
export async function allPulseAlerts(
  series: Pick<Series, 'nodes' | 'newest'>,
  holdMs: number,
  thisNode: string,
  now: Date,
  windows: SeriesWindows = plainWindows(series),
): Promise<PulseAlert[]> {
  const [nodes, unnamed] = await Promise.all([series.nodes(), series.newest('pulse', PULSE_ALERT_WINDOW)]);
  const byNode = new Map<string, PulseEntry[]>();
  const cut = new Set<string>();
  const add = (node: string, entry: PulseEntry | undefined) => {
    if (!entry) return;
    const list = byNode.get(node) ?? [];
    list.push(entry);
    byNode.set(node, list);
  };
  for (const record of unnamed.items) if (typeof record.node !== 'string') add(thisNode, pulseEntryOf(record));
  if (unnamed.items.length >= PULSE_ALERT_WINDOW) cut.add(thisNode);
  const pages = await Promise.all(
    nodes.map((node) => windowSpanningHold<PulseEntry | undefined>(PULSE_ALERT_WINDOWS, holdMs, (e) => e?.ms, (limit) => windows.window('pulse', node, limit, pulseEntryOf))),
  );
  nodes.forEach((node, i) => {
    const page = pages[i];
    for (const entry of page?.items ?? []) add(node, entry);
    if (page?.full) cut.add(node);
  });
  const alerts: PulseAlert[] = [];
  for (const [node, entries] of byNode) {
    entries.sort((a, b) => a.ms - b.ms);
    // A full window (a full page read, whatever lines of it are entries) starts in the state of its first entry: an older condition does not fire again as the window slides.
    const initial = cut.has(node) && entries[0] ? entries[0].status : 'healthy';
    alerts.push(...pulseAlerts(node, entries, holdMs, now.getTime(), initial));
  }
  return alerts;
}
