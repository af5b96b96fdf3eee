import { createHash } from 'node:crypto';

/**
 * The `webhook-id` of an event's delivery to a target: a hash of the
 * target's name and the event's kind, subject and time, which every replica
 * and every restart computes alike (derived events keep their `ts`:
 * src/core/events/estate-events.ts), so an event is enqueued once per target and its
 * retries carry the same id. The message is left out: it may change as
 * time passes (`not seen for 20m`), the event does not.
 */
export function deliveryId(target: string, event: { kind: string; subject: string; ts: string }): string {
  const hash = createHash('sha256').update(JSON.stringify([target, event.kind, event.subject, event.ts])).digest('hex');
  return `msg_${hash.slice(0, 32)}`;
}
