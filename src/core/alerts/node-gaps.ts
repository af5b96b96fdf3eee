import { elapsedText } from '../elapsed-text.ts';

// node_stale and node_recovered (DESIGN.md 7a, 7c): a node is stale once
// nothing was heard of it for `events.stale_after_s`, and recovered when it
// sends again. Derived, with no state of their own, from the node's stored
// trend points (each gap between two consecutive ones longer than the
// threshold is a stale spell that ended) and from when it was last seen (a
// silence up to now longer than the threshold is a spell still on): every
// node_recovered follows its node_stale, and a node is stale now exactly
// when its last node_stale has no node_recovered after it.

/** The newest trend points of each node its spells are derived from (through the node's index: no scan of the log). */
export const NODE_GAP_WINDOW = 200;

export interface NodeEvent {
  ts: string;
  kind: 'node_stale' | 'node_recovered';
  subject: string;
  message: string;
}

/**
 * The stale spells of `node`, oldest first: for each gap longer than
 * `staleAfterMs` between consecutive `sent` times (its trend points, in
 * any order) a node_stale at the gap's start plus the threshold and a
 * node_recovered at its end; and when `lastSeenMs` (the newest of its
 * trend points and its heartbeat) is older than the threshold at `nowMs`,
 * a node_stale still on, dated from its newest trend point (the heartbeat
 * for a node without any) plus the threshold.
 *
 * @example
 *   nodeGapEvents('web-1', [0, 60_000, 3_660_000], 900_000, 3_660_000, 3_700_000).map((e) => e.kind) // ['node_stale', 'node_recovered']
 */
export function nodeGapEvents(node: string, sent: readonly number[], staleAfterMs: number, lastSeenMs: number | undefined, nowMs: number): NodeEvent[] {
  const times = [...sent].sort((a, b) => a - b);
  const events: NodeEvent[] = [];
  for (let i = 1; i < times.length; i++) {
    const from = times[i - 1] as number;
    const to = times[i] as number;
    if (to - from <= staleAfterMs) continue;
    events.push({ ts: new Date(from + staleAfterMs).toISOString(), kind: 'node_stale', subject: node, message: `${node} has not been seen for ${elapsedText(staleAfterMs)}` });
    events.push({ ts: new Date(to).toISOString(), kind: 'node_recovered', subject: node, message: `${node} is sending again after ${elapsedText(to - from)} of silence` });
  }
  if (lastSeenMs !== undefined && nowMs - lastSeenMs > staleAfterMs) {
    // Dated from the newest trend point when there is one, as the gap will be once the node sends again (so the spell
    // keeps one node_stale, stored or derived, whatever else wrote a heartbeat meanwhile); from the heartbeat otherwise.
    const from = times.at(-1) ?? lastSeenMs;
    events.push({ ts: new Date(from + staleAfterMs).toISOString(), kind: 'node_stale', subject: node, message: `${node} has not been seen for ${elapsedText(nowMs - lastSeenMs)}` });
  }
  return events;
}
