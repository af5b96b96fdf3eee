import type { HeartbeatEntry } from '../collect/sample-types.ts';
import { type HeartbeatOutcome, mergeHeartbeats } from './heartbeat-merge.ts';

/**
 * The hub's heartbeat merges (`mergeHeartbeats` with `keep: 'newer'`) of one
 * data dir, coalesced: the entries of every caller that arrives while a
 * merge is being written go into the next one, so a hub taking many nodes'
 * samples at once rewrites (and syncs) the heartbeat once per round, not once
 * per request. Each caller's promise settles with the merge that wrote its
 * entries (durable then).
 */
export function heartbeatQueue(dataDir: string): (entries: readonly HeartbeatEntry[]) => Promise<HeartbeatOutcome> {
  let pending: HeartbeatEntry[] = [];
  let callers: { resolve: (outcome: HeartbeatOutcome) => void; reject: (err: unknown) => void }[] = [];
  let running = false;
  const drain = async () => {
    while (pending.length) {
      const entries = pending;
      const waiting = callers;
      pending = [];
      callers = [];
      try {
        const outcome = await mergeHeartbeats(dataDir, entries, { keep: 'newer' });
        for (const caller of waiting) caller.resolve(outcome);
      } catch (err) {
        for (const caller of waiting) caller.reject(err);
      }
    }
    running = false;
  };
  return (entries) =>
    new Promise((resolve, reject) => {
      pending.push(...entries);
      callers.push({ resolve, reject });
      if (!running) {
        running = true;
        void drain();
      }
    });
}
