import { setTimeout as sleep } from 'node:timers/promises';
import type { HubTarget } from './post-samples.ts';
import type { SampleSpool } from './sample-spool.ts';
import { type SendReport, sendSpool } from './send-spool.ts';

/** The longest wait between two tries of a hub that does not answer (DESIGN.md 7a: a returning hub gets the backlog within it). */
export const MAX_RETRY_MS = 15_000;
const FIRST_RETRY_MS = 1_000;

export interface SenderReport {
  /** What each send did (not one stopped by the signal). */
  sent: (report: SendReport) => void;
  /** A send that failed here, not at the hub (the spool could not be read): tried again after the backoff. */
  failed: (err: unknown) => void;
}

export interface HubSender {
  /** A sample was spooled: send now, unless waiting out a backoff. */
  wake(): void;
  /** Resolves once the sender has stopped (after the signal aborts). */
  done: Promise<void>;
}

/**
 * Sends the spool to the hub in the background until `signal` aborts: at
 * once when woken (a new sample), and while the hub is unreachable, answers
 * 429 or 5xx, or refuses the key, again after a backoff doubling from 1 s
 * to MAX_RETRY_MS (Retry-After honoured up to that cap). Each send's report
 * goes to `report.sent`. On abort the request in flight is abandoned: its
 * batch stays in the spool.
 */
export function startHubSender(spool: SampleSpool, target: HubTarget, signal: AbortSignal, report: SenderReport): HubSender {
  let wakeUp: (() => void) | undefined;
  let woken = false;
  const wake = () => {
    woken = true;
    wakeUp?.();
  };
  signal.addEventListener('abort', () => wakeUp?.(), { once: true });
  const nextWake = () =>
    new Promise<void>((resolve) => {
      if (woken || signal.aborted) return resolve();
      wakeUp = resolve;
    });
  const run = async () => {
    let delay = FIRST_RETRY_MS;
    while (!signal.aborted) {
      await nextWake();
      woken = false;
      wakeUp = undefined;
      if (signal.aborted) return;
      let sent: SendReport | undefined;
      try {
        sent = await sendSpool(spool, target, { signal });
      } catch (err) {
        report.failed(err);
      }
      if (sent?.outcome === 'stopped') return;
      if (sent) report.sent(sent);
      if (sent?.outcome === 'drained') {
        delay = FIRST_RETRY_MS;
        continue;
      }
      const wait = Math.min(MAX_RETRY_MS, sent?.retryAfterMs ?? delay);
      delay = Math.min(MAX_RETRY_MS, delay * 2);
      try {
        await sleep(wait, undefined, { signal });
      } catch {
        return;
      }
      woken = true;
    }
  };
  return { wake, done: run() };
}
