import { createHmac } from 'node:crypto';
import { fetchFailure } from '../fetch-failure.ts';
import type { DeliveryAttempt } from './outbox-types.ts';

/** The error of an attempt cut short because the server was stopping: tried again at once, and left out of the backoff. */
export const STOPPED = 'stopped: estate was shutting down';

/** At most this much of a receiver's answer is read (then dropped): only its status counts. */
const MAX_ANSWER_BYTES = 64 * 1024;

export interface WebhookRequest {
  url: string;
  /** The `webhook-id`. */
  id: string;
  /** The body, as enqueued. */
  body: string;
  /** The target's `whsec_` secret (readWebhookSecret). */
  secret: string;
  timeoutMs: number;
  /** Aborts the attempt (the server stopping). */
  signal?: AbortSignal;
  now?: () => Date;
}

/**
 * One attempt of a delivery, as the Standard Webhooks specification has it:
 * POST of the body with `webhook-id`, `webhook-timestamp` (the attempt's
 * Unix seconds) and `webhook-signature` (`v1,` and the base64 HMAC-SHA256 of
 * `{id}.{timestamp}.{body}` under the secret's key: the base64 after
 * `whsec_`, decoded). The tests check every signature with the
 * specification's own library (`standardwebhooks`' Webhook.verify). A 2xx answer delivers it; anything else,
 * a redirect included, is a failed attempt. Never throws: what happened is
 * the answer. The error text names neither the URL nor the secret.
 */
export async function sendWebhook(request: WebhookRequest): Promise<DeliveryAttempt> {
  const now = request.now ?? (() => new Date());
  const at = now();
  const started = performance.now();
  const done = (http_status: number | null, error: string | null): DeliveryAttempt => ({ at: at.toISOString(), http_status, error, duration_ms: Math.round(performance.now() - started) });
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const signature = signWebhook(request.secret, request.id, timestamp, request.body);
  const timeout = AbortSignal.timeout(request.timeoutMs);
  const signal = request.signal ? AbortSignal.any([timeout, request.signal]) : timeout;
  try {
    const res = await fetch(request.url, {
      method: 'POST',
      redirect: 'manual',
      signal,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'estate-webhooks',
        'webhook-id': request.id,
        'webhook-timestamp': timestamp,
        'webhook-signature': signature,
      },
      body: request.body,
    });
    await drain(res);
    return res.status >= 200 && res.status < 300 ? done(res.status, null) : done(res.status, `HTTP ${res.status}`);
  } catch (err) {
    if (request.signal?.aborted) return done(null, STOPPED);
    const failure = fetchFailure(err);
    return done(null, failure.timedOut ? `timed out after ${request.timeoutMs} ms` : stripUrl(failure.reason, request.url));
  }
}

/**
 * The `webhook-signature` of a request: `v1,` and the base64 HMAC-SHA256 of
 * `{id}.{timestamp}.{body}`, keyed with the secret's bytes (`whsec_`
 * stripped, base64-decoded), as the Standard Webhooks specification has it.
 */
export function signWebhook(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64')}`;
}

/** Reads and drops the answer, at most MAX_ANSWER_BYTES of it, so the connection is freed. */
async function drain(res: Response): Promise<void> {
  const reader = res.body?.getReader();
  if (!reader) return;
  let read = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      read += value.byteLength;
      if (read > MAX_ANSWER_BYTES) {
        await reader.cancel();
        return;
      }
    }
  } catch {
    // The status is what counts; a body cut short does not change it.
  }
}

/** A network error's text without the target's URL (its path may be a secret of the receiver's). */
function stripUrl(reason: string, url: string): string {
  return reason.split(url).join('<target url>');
}
