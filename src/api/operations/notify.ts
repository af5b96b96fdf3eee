import { z } from 'zod';
import { sendTestEvent } from '../../core/notify/notify-test.ts';
import type { Delivery } from '../../core/notify/outbox-types.ts';
import { defineOperation } from '../define-operation.ts';
import { dateTime, limitParam } from '../schemas.ts';

const targetName = z
  .string()
  .min(1)
  .max(64)
  .meta({ description: 'The name of a target of `notify` in the config.', examples: ['ops-hook'] });

const attempt = z
  .object({
    at: dateTime('When the attempt started, UTC.'),
    http_status: z.int().nullable().meta({ description: 'What the receiver answered; null when it did not answer.' }),
    error: z.string().nullable().meta({ description: 'Why the attempt failed (`HTTP 500`, `timed out after 10000 ms`, a network error); null when it delivered. Never a secret or the target\'s URL.' }),
    duration_ms: z.int().min(0),
  })
  .meta({ id: 'NotifyAttempt' });

const delivery = z
  .object({
    id: z.string().meta({ description: 'The delivery\'s `webhook-id`, the same at every attempt: `msg_` and 32 hex digits.', examples: ['msg_3f1c0e4b9a7d2e6f8a1b5c9d0e2f4a6b'] }),
    target: z.string(),
    type: z.string().meta({ description: 'The event\'s kind (`schedule_down`, `pulse_degraded`, …; `test` for estate notify test).' }),
    subject: z.string(),
    event_ts: dateTime('When the event happened, UTC.'),
    status: z.enum(['pending', 'delivered', 'failed']).meta({ description: '`pending` (waiting for its next attempt), `delivered` (a 2xx answer), `failed` (no 2xx within the target\'s `retry_for`).' }),
    attempt_count: z.int().min(0),
    created_at: dateTime('When it was enqueued, UTC.'),
    next_attempt_at: dateTime('When the next attempt is due (pending only), UTC.').nullable(),
    delivered_at: dateTime('When a receiver took it, UTC.').nullable(),
    expires_at: dateTime('No attempt starts after this, UTC: the target\'s `retry_for` after `created_at`.'),
    last_http_status: z.int().nullable(),
    last_error: z.string().nullable(),
    attempts: z.array(attempt).meta({ description: 'The attempts, oldest first (the newest 20).' }),
  })
  .meta({ id: 'NotifyDelivery' });

function deliveryView(d: Delivery): z.output<typeof delivery> {
  const last = d.attempts.at(-1);
  return {
    id: d.id,
    target: d.target,
    type: d.type,
    subject: d.subject,
    event_ts: d.event_ts,
    status: d.status,
    attempt_count: d.attempt_count,
    created_at: d.created_at,
    next_attempt_at: d.status === 'pending' ? d.next_at : null,
    delivered_at: d.delivered_at,
    expires_at: d.expires_at,
    last_http_status: last?.http_status ?? null,
    last_error: last?.error ?? null,
    attempts: d.attempts,
  };
}

export const notifyDeliveries = defineOperation({
  id: 'notify.deliveries',
  method: 'GET',
  path: '/notify/deliveries',
  access: 'protected',
  tag: 'notify',
  summary: 'Recent webhook deliveries to the notify targets, with each attempt and its status, newest first',
  description: [
    'Each watched event (DESIGN.md 7c) of a target\'s kinds is enqueued once per target in the store\'s durable outbox and delivered as a Standard Webhooks request (docs/notify.md),',
    'retried with exponential backoff and jitter for the target\'s `retry_for`. A delivery\'s `id` is its `webhook-id`, the same at every attempt.',
    'Neither the target\'s URL nor its secret is ever shown.',
  ].join(' '),
  input: {
    query: z.object({
      limit: limitParam(50, 1000, 'deliveries'),
      target: targetName.optional().meta({ description: 'Only the deliveries to this target.' }),
      status: z.enum(['pending', 'delivered', 'failed']).optional().meta({ description: 'Only the deliveries in this status.' }),
    }),
  },
  output: z.object({ items: z.array(delivery), count: z.int().min(0), limit: z.int() }).meta({ id: 'NotifyDeliveryPage' }),
  handler: async ({ ctx, input }) => {
    const { limit, target, status } = input.query;
    const items = (await ctx.store.outbox.recent(limit, { target, status })).map(deliveryView);
    return { items, count: items.length, limit };
  },
  cli: {
    command: 'notify log',
    columns: ['created_at', 'target', 'type', 'subject', 'status', 'attempt_count', 'last_http_status', 'last_error', 'id'],
    examples: ['estate notify log', 'estate notify log --target ops-hook --status failed --json'],
  },
});

export const notifyTest = defineOperation({
  id: 'notify.test',
  method: 'POST',
  path: '/notify/targets/{target}/test',
  access: 'protected',
  tag: 'notify',
  summary: 'Send a test event (kind `test`) to a notify target now, signed as every delivery is',
  description: [
    'One Standard Webhooks request to the target, now, once (no retry), with a fresh `webhook-id`, recorded in the outbox (`GET /notify/deliveries`).',
    'A target the config does not name is 404; a secret that is missing or not a `whsec_` secret is 400 (naming the variable, never its value);',
    'a receiver that does not answer 2xx is 502 (504 when it does not answer within the target\'s `timeout_ms`).',
  ].join(' '),
  input: { path: z.object({ target: targetName }) },
  output: z
    .object({
      id: z.string(),
      target: z.string(),
      type: z.literal('test'),
      status: z.literal('delivered'),
      http_status: z.int(),
      at: dateTime('When it was sent, UTC.'),
      duration_ms: z.int().min(0),
    })
    .meta({ id: 'NotifyTestDelivery' }),
  errors: [400, 404, 502, 504],
  handler: ({ ctx, input }) => sendTestEvent(ctx.config.notify, ctx.sources.secrets.notify, ctx.store.outbox, input.path.target, ctx.now),
  cli: { command: 'notify test', args: ['target'], examples: ['estate notify test ops-hook'] },
});
