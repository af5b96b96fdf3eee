import { plainWindows, type SeriesWindows } from '../series/series-windows.ts';
import type { Series } from '../store/store.ts';
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

/** How long the observations of a window span, newest first (those `at` can date). */
function spanMs<T>(items: readonly T[], at: (item: T) => number | undefined): number {
  let newest: number | undefined;
  let oldest: number | undefined;
  for (const item of items) {
    const ms = at(item);
    if (ms === undefined) continue;
    newest = Math.max(newest ?? ms, ms);
    oldest = Math.min(oldest ?? ms, ms);
  }
  return newest === undefined || oldest === undefined ? 0 : newest - oldest;
}

/**
 * The newest window of `limits` (each larger than the one before) that is
 * not full or spans twice `holdMs`, or the largest: `read(limit)` gives
 * the newest `limit` observations, newest first, and whether it was full.
 */
export async function windowSpanningHold<T>(
  limits: readonly number[],
  holdMs: number,
  at: (item: T) => number | undefined,
  read: (limit: number) => Promise<{ items: T[]; full: boolean }>,
): Promise<{ items: T[]; full: boolean; limit: number }> {
  for (let i = 0; ; i++) {
    const limit = limits[i] as number;
    const page = await read(limit);
    if (!page.full || i === limits.length - 1 || spanMs(page.items, at) >= 2 * holdMs) return { ...page, limit };
  }
}

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
