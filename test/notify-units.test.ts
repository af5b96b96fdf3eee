import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { parseConfig } from '../src/config.ts';
import { deliveryId } from '../src/core/notify/delivery-id.ts';
import { nextStep } from '../src/core/notify/notify-dispatcher.ts';
import { FIRST_RETRY_MS, MAX_RETRY_MS, retryDelayMs } from '../src/core/notify/retry-delay.ts';
import type { DeliveryAttempt } from '../src/core/notify/outbox-types.ts';
import { signWebhook, STOPPED } from '../src/core/notify/send-webhook.ts';
import { webhookBody } from '../src/core/notify/webhook-payload.ts';
import { readWebhookSecret } from '../src/core/notify/webhook-secret.ts';

// The pieces of webhook delivery on their own: signatures (checked against
// the Standard Webhooks library), ids, the backoff, and the config.

const SECRET = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;

test('signWebhook gives what the Standard Webhooks library signs and verifies, for any body', () => {
  const lib = new Webhook(SECRET);
  const at = new Date('2026-12-01T10:00:00.900Z');
  for (const body of ['{}', webhookBody({ ts: at.toISOString(), kind: 'schedule_down', source: 'schedule', subject: 'nightly', message: 'nächtlich ☃ is down' }), '']) {
    const timestamp = String(Math.floor(at.getTime() / 1000));
    const signature = signWebhook(SECRET, 'msg_1', timestamp, body);
    assert.equal(signature, lib.sign('msg_1', at, body));
    // verify checks the timestamp against the clock: sign now.
    const now = String(Math.floor(Date.now() / 1000));
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': now, 'webhook-signature': signWebhook(SECRET, 'msg_1', now, body) };
    if (body) assert.deepEqual(lib.verify(body, headers), JSON.parse(body));
    assert.throws(() => lib.verify(`${body} `, headers), /No matching signature/);
  }
});

test('deliveryId: the same event and target give the same id, whatever its message; another target, kind, subject or time another', () => {
  const event = { ts: '2026-12-01T10:00:00.000Z', kind: 'node_stale', subject: 'web-1', message: 'web-1 has not been seen for 16m' };
  const id = deliveryId('ops', event);
  assert.match(id, /^msg_[0-9a-f]{32}$/);
  const later = { ...event, message: 'web-1 has not been seen for 2h' };
  assert.equal(deliveryId('ops', later), id);
  const others = [deliveryId('pager', event), deliveryId('ops', { ...event, kind: 'pulse_degraded' }), deliveryId('ops', { ...event, subject: 'web-2' }), deliveryId('ops', { ...event, ts: '2026-12-01T10:00:00.001Z' })];
  assert.equal(new Set([id, ...others]).size, 5);
});

test('retryDelayMs doubles from 5 s up to 5 min, each delay drawn from the upper half of its ceiling', () => {
  const cases: [attempt: number, random: number, ms: number][] = [
    [1, 0, FIRST_RETRY_MS / 2],
    [1, 0.999_999, FIRST_RETRY_MS],
    [2, 0, FIRST_RETRY_MS],
    [3, 0.5, FIRST_RETRY_MS * 3],
    [7, 0, MAX_RETRY_MS / 2],
    [40, 0.999_999, MAX_RETRY_MS],
  ];
  for (const [attempt, random, ms] of cases) assert.equal(retryDelayMs(attempt, random), ms, `attempt ${attempt}, random ${random}`);
});

test('nextStep: a 2xx delivers; a failure is tried again after the backoff while that is before expires_at, then the delivery has failed', () => {
  const at = '2026-12-01T10:00:00.000Z';
  const failed = { at, http_status: 500, error: 'HTTP 500', duration_ms: 1 };
  const stopped = { at, http_status: null, error: STOPPED, duration_ms: 1 };
  const earlier = (n: number) => Array.from({ length: n }, () => failed);
  const cases: { name: string; attempts: DeliveryAttempt[]; expires: string; attempt: DeliveryAttempt; stopped?: boolean; expected: unknown }[] = [
    { name: 'delivered', attempts: [], expires: '2026-12-01T11:00:00.000Z', attempt: { ...failed, http_status: 204, error: null }, expected: { status: 'delivered' } },
    { name: 'first failure: 2.5-5 s later', attempts: [], expires: '2026-12-01T11:00:00.000Z', attempt: failed, expected: { status: 'pending', next_at: '2026-12-01T10:00:05.000Z' } },
    { name: 'second failure: 5-10 s later', attempts: earlier(1), expires: '2026-12-01T11:00:00.000Z', attempt: failed, expected: { status: 'pending', next_at: '2026-12-01T10:00:10.000Z' } },
    { name: 'a failure after attempts cut short by stops: the backoff counts only the others', attempts: [failed, stopped, stopped], expires: '2026-12-01T11:00:00.000Z', attempt: failed, expected: { status: 'pending', next_at: '2026-12-01T10:00:10.000Z' } },
    { name: 'past expires_at: failed', attempts: earlier(5), expires: '2026-12-01T10:00:30.000Z', attempt: failed, expected: { status: 'failed' } },
    { name: 'cut short by a stop: again at once', attempts: earlier(3), expires: '2026-12-01T11:00:00.000Z', attempt: stopped, stopped: true, expected: { status: 'pending', next_at: at } },
  ];
  for (const c of cases) assert.deepEqual(nextStep({ attempts: c.attempts, expires_at: c.expires }, c.attempt, c.stopped, 0.999_999_99), c.expected, c.name);
});

test('readWebhookSecret names the variable, never its value', () => {
  assert.equal(readWebhookSecret('HOOK', SECRET), SECRET);
  assert.throws(() => readWebhookSecret('HOOK', undefined), /HOOK \(secret_env\) is not set/);
  for (const bad of ['s3cr3t-value', 'whsec_', 'whsec_c2hvcnQ=', `whsec_${'!'.repeat(30)}`]) {
    assert.throws(
      () => readWebhookSecret('HOOK', bad),
      (err: Error) => /HOOK \(secret_env\) does not hold a whsec_ secret/.test(err.message) && !err.message.includes(bad.slice(6) || 'whsec_x'),
    );
  }
});

test('config: notify targets are checked with their path; the defaults fill in', () => {
  const ok = parseConfig(JSON.stringify({ notify: [{ name: 'ops', url: 'https://hooks.example.org/estate', secret_env: 'OPS_HOOK' }] }), 'estate.config.json');
  assert.deepEqual(ok.notify, [{ name: 'ops', url: 'https://hooks.example.org/estate', secret_env: 'OPS_HOOK', timeout_ms: 10_000, retry_for: '1h' }]);
  assert.equal(ok.notify_catch_up, '1h');
  assert.equal(ok.notify_scan, '10s');
  const bad: [config: object, problem: RegExp][] = [
    [{ notify: [{ name: 'a', url: 'https://x.example', secret_env: 'A', events: ['heartbeat'] }] }, /notify\.0\.events\.0: /],
    [{ notify: [{ name: 'a', url: 'https://user:pw@x.example', secret_env: 'A' }] }, /notify\.0\.url: must not contain credentials/],
    [{ notify: [{ name: 'a', url: 'https://x.example', secret_env: 'A', secret: 'whsec_x' }] }, /notify\.0\.secret: unknown key/],
    [{ notify: [{ name: 'a', url: 'https://x.example', secret_env: 'A', retry_for: '8d' }] }, /notify\.0\.retry_for: .*at most 7d/],
    [{ notify: [{ name: 'a', url: 'https://x.example', secret_env: 'A' }, { name: 'a', url: 'https://y.example', secret_env: 'B' }] }, /notify\.1\.name: duplicate notify target name "a"/],
    [{ notify_catch_up: '30d' }, /notify_catch_up: .*at most 7d/],
    [{ notify_scan: '500ms' }, /notify_scan: .*from 1s to 10m/],
    [{ notify_scan: '1h' }, /notify_scan: .*from 1s to 10m/],
  ];
  for (const [config, problem] of bad) assert.throws(() => parseConfig(JSON.stringify(config), 'estate.config.json'), problem, JSON.stringify(config));
});
