import { randomBytes } from 'node:crypto';
import type { NotifyTargetConfig } from '../../config.ts';
import { EstateError } from '../../errors.ts';
import type { Store } from '../store/store.ts';
import type { Delivery } from './outbox-types.ts';
import { sendWebhook } from './send-webhook.ts';
import { webhookBody } from './webhook-payload.ts';
import { readWebhookSecret } from './webhook-secret.ts';

export interface TestDelivery {
  id: string;
  target: string;
  type: 'test';
  status: 'delivered';
  http_status: number;
  at: string;
  duration_ms: number;
}

/**
 * `estate notify test TARGET` (POST /notify/targets/{target}/test): one
 * event of kind `test` sent to the target now, signed as every delivery is,
 * once (no retry), and recorded in the outbox so `estate notify log` shows
 * it. A target the config does not name is `not_found`; a secret that is
 * missing or not a whsec_ secret is `usage`; a receiver that does not answer
 * 2xx is `bad_gateway` (`gateway_timeout` when it took too long), naming
 * what it answered.
 */
export async function sendTestEvent(targets: readonly NotifyTargetConfig[], secrets: Readonly<Record<string, string | undefined>>, outbox: Store['outbox'], name: string, now: () => Date): Promise<TestDelivery> {
  const target = targets.find((t) => t.name === name);
  if (!target) {
    const known = targets.length ? `: the targets are ${targets.map((t) => t.name).join(', ')}` : ': it has none (notify in estate.config.json)';
    throw new EstateError('not_found', `no notify target "${name}" in the config${known}`);
  }
  const secret = readWebhookSecret(target.secret_env, secrets[target.name]);
  // An outbox that cannot be read (or written) fails the call before anything is sent: a test event is always in the log.
  await outbox.recent(1);
  const at = now();
  const id = `msg_${randomBytes(16).toString('hex')}`;
  const event = { ts: at.toISOString(), kind: 'test', source: 'notify', subject: name, message: `a test event from estate to the notify target ${name}` };
  const body = webhookBody(event);
  const attempt = await sendWebhook({ url: target.url, id, body, secret, timeoutMs: target.timeout_ms, now });
  const delivered = attempt.error === null;
  const delivery: Delivery = {
    id,
    target: name,
    type: 'test',
    subject: name,
    event_ts: event.ts,
    body,
    created_at: event.ts,
    expires_at: event.ts,
    status: delivered ? 'delivered' : 'failed',
    attempt_count: 1,
    attempts: [attempt],
    next_at: null,
    delivered_at: delivered ? attempt.at : null,
    lease_owner: null,
    lease_until: null,
  };
  await outbox.restore([delivery]);
  if (!delivered) {
    const code = attempt.http_status === null && attempt.error?.startsWith('timed out') ? 'gateway_timeout' : 'bad_gateway';
    throw new EstateError(code, `the notify target ${name} did not take the test event (${id}): ${attempt.error}`);
  }
  return { id, target: name, type: 'test', status: 'delivered', http_status: attempt.http_status as number, at: attempt.at, duration_ms: attempt.duration_ms };
}
