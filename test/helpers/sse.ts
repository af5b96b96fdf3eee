import { sseEvents, type SseEvent } from '../../src/cli/sse-events.ts';
import { PATIENCE_MS } from './wait-until.ts';

export interface OpenStream {
  status: number;
  headers: Headers;
  /** Every event received so far. */
  events: SseEvent[];
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  /** Waits until `count` events have arrived (generous timeout, no timing assertion). */
  waitForEvents: (count: number, timeoutMs?: number) => Promise<SseEvent[]>;
  close: () => void;
}

/** Opens a server-sent event stream with fetch and collects its events; closed after the test. */
export async function openStream(t: { after: (fn: () => unknown) => void }, url: string, headers: Record<string, string> = {}): Promise<OpenStream> {
  const controller = new AbortController();
  t.after(() => controller.abort());
  const response = await fetch(url, { headers: { Accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const events: SseEvent[] = [];
  const ended = (async () => {
    if (!response.ok || !response.body) return;
    try {
      for await (const event of sseEvents(response.body)) events.push(event);
    } catch {
      // aborted by close()
    }
  })();
  return {
    status: response.status,
    headers: response.headers,
    events,
    ended,
    waitForEvents: async (count, timeoutMs = PATIENCE_MS) => {
      const deadline = Date.now() + timeoutMs;
      while (events.length < count) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${count} events; got ${JSON.stringify(events)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return events;
    },
    close: () => controller.abort(),
  };
}
