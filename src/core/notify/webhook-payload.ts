/** An event as /events answers it (src/core/events/estate-events.ts), or the test event. */
export interface WebhookEvent {
  ts: string;
  kind: string;
  source: string;
  subject: string;
  message: string;
}

/**
 * The body of a delivery (docs/notify.md): `{type, timestamp, data}` as the
 * Standard Webhooks specification shapes a payload, `type` the event's kind,
 * `timestamp` its time, `data` the event itself. Built once, at enqueue:
 * every attempt sends (and signs) these exact bytes.
 */
export function webhookBody(event: WebhookEvent): string {
  const { ts, kind, source, subject, message } = event;
  return JSON.stringify({ type: kind, timestamp: ts, data: { ts, kind, source, subject, message } });
}
