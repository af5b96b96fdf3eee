import assert from 'node:assert/strict';
import { appendFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { runEstate, startEstate, type RunningEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { parseExposition, valueOf } from './helpers/exposition.ts';
import { newKey, readResponse } from './helpers/server.ts';
import { waitUntil } from './helpers/wait-until.ts';
import { startReceiver, type WebhookReceiver } from './helpers/webhook-receiver.ts';

// Webhooks end to end (docs/notify.md): the real `estate serve` child
// process derives the watched events from the data it serves, enqueues them
// in its outbox and delivers them to a real receiver on loopback that checks
// each signature with the Standard Webhooks library; the receiver fails,
// recovers, and estate is SIGKILLed between an enqueue and its delivery.

async function notifyDir(t: Parameters<typeof tempDataDir>[0], receiver: WebhookReceiver): Promise<string> {
  const dir = await tempDataDir(t);
  const config = {
    alerts: { hold: '0s' },
    notify_scan: '1s', notify: [{ name: 'ops', url: receiver.url, secret_env: 'OPS_SECRET', events: ['pulse_degraded', 'pulse_unhealthy', 'pulse_recovered'], timeout_ms: 2000 }],
  };
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify(config));
  return dir;
}

async function serve(t: Parameters<typeof tempDataDir>[0], dir: string, receiver: WebhookReceiver): Promise<RunningEstate & { url: string }> {
  const child = startEstate(t, ['serve', '--port', '0', '--quiet', '--log-format', 'json', '--data-dir', dir], { env: { OPS_SECRET: receiver.secret } });
  await child.waitForStdout('the server listens', (out) => / at http:\/\/\S+\n/.test(out));
  return Object.assign(child, { url: / at (http:\/\/\S+)\n/.exec(child.stdout())?.[1] as string });
}

/** A pulse entry of node `web-1`, as another node's collector (or any tool) appends it to the served data dir. */
function pulseLine(status: 'healthy' | 'degraded' | 'unhealthy', ts = new Date()): string {
  const checks = status === 'healthy' ? { 'disk:/': { status: 'healthy', value: 40 } } : { 'disk:/': { status, value: 91.2 }, memory: { status: 'healthy', value: 30 } };
  return `${JSON.stringify({ ts: ts.toISOString(), node: 'web-1', status, checks })}\n`;
}

const deliveries = async (dir: string) => {
  const r = await runEstate(['notify', 'log', '--json', '--data-dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  return r.json.items as { id: string; type: string; status: string; attempt_count: number; attempts: { http_status: number | null }[] }[];
};

test('estate serve: a pulse that degrades reaches the receiver signed; a receiver that fails first (500) gets the same webhook-id again', async (t) => {
  const receiver = await startReceiver(t);
  let calls = 0;
  receiver.answer(() => (++calls === 1 ? 500 : 204));
  const dir = await notifyDir(t, receiver);
  // History from before the target's first start is not sent (no flood of old events).
  await appendFile(path.join(dir, 'health-pulse.jsonl'), pulseLine('unhealthy', new Date(Date.now() - 60_000)) + pulseLine('healthy', new Date(Date.now() - 30_000)));
  const server = await serve(t, dir, receiver);
  await appendFile(path.join(dir, 'health-pulse.jsonl'), pulseLine('degraded'));

  await waitUntil('the receiver took the event', () => receiver.accepted().length >= 1);
  const [first, second] = receiver.received;
  assert.ok(first && second);
  assert.deepEqual([first.status, second.status], [500, 204]);
  assert.equal(second.id, first.id, 'the retry carries the same webhook-id');
  assert.equal(second.body, first.body, 'and the same body');
  assert.ok(second.payload, 'Webhook.verify accepted the signature');
  assert.equal(second.payload.type, 'pulse_degraded');
  assert.deepEqual([second.payload.data.kind, second.payload.data.source, second.payload.data.subject], ['pulse_degraded', 'pulse', 'web-1']);
  assert.match(second.payload.data.message, /web-1 is degraded: disk:\/ at 91\.2/);
  assert.equal(second.payload.timestamp, second.payload.data.ts);
  assert.deepEqual(
    receiver.received.map((r) => r.payload?.type),
    ['pulse_degraded', 'pulse_degraded'],
    'the unhealthy spell and its recovery from before the start were not sent',
  );

  // GET /notify/deliveries lists the attempts (recorded just after the receiver answered: wait for the record).
  const key = await newKey(dir);
  const list = async () => readResponse(await fetch(`${server.url}/notify/deliveries`, { headers: { 'X-API-Key': key } }));
  await waitUntil('the delivery recorded as delivered', async () => (await list()).json.items[0]?.status === 'delivered');
  const listed = await list();
  assert.equal(listed.status, 200, listed.text);
  const [d] = listed.json.items;
  assert.deepEqual([d.id, d.type, d.status, d.attempt_count, d.attempts.map((a: { http_status: number }) => a.http_status), d.last_error], [first.id, 'pulse_degraded', 'delivered', 2, [500, 204], null]);
  assert.ok(!listed.text.includes(receiver.secret.slice(6)) && !listed.text.includes(receiver.url), 'neither the secret nor the URL');
  // /metrics counts the attempts by outcome and the events this server stored.
  const metrics = parseExposition((await readResponse(await fetch(`${server.url}/metrics`, { headers: { 'X-API-Key': key } }))).text);
  assert.deepEqual(
    ['delivered', 'retry', 'failed'].map((outcome) => valueOf(metrics, 'estate_notify_attempts_total', { target: 'ops', outcome })),
    [1, 1, 0],
  );
  assert.equal(valueOf(metrics, 'estate_notify_attempt_duration_seconds_count', { target: 'ops' }), 2);
  assert.equal(valueOf(metrics, 'estate_events_recorded_total', { kind: 'pulse_degraded' }), 1);

  const stopped = await server.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.ok(!stopped.stderr.includes(receiver.secret.slice(6)), 'no secret in the log');
  assert.match(stopped.stderr, /"event":"notify_attempt".*"status":"pending".*"http_status":500/);
});

test('estate serve SIGKILLed between enqueue and delivery: the restarted server delivers exactly what was enqueued, same ids, and the events of its down time', async (t) => {
  const receiver = await startReceiver(t);
  receiver.answer(503);
  const dir = await notifyDir(t, receiver);
  const pulse = path.join(dir, 'health-pulse.jsonl');
  const first = await serve(t, dir, receiver);
  await appendFile(pulse, pulseLine('unhealthy'));
  await waitUntil('an attempt failed and the delivery waits for its retry', async () => (await deliveries(dir)).some((d) => d.status === 'pending' && d.attempt_count >= 1));
  const enqueued = await deliveries(dir);
  assert.deepEqual(enqueued.map((d) => d.type), ['pulse_unhealthy']);
  await first.stop('SIGKILL');

  // While it is down the node recovers: an event the next start must not miss.
  await appendFile(pulse, pulseLine('healthy'));
  receiver.answer(200);
  const refused = receiver.received.length;
  const second = await serve(t, dir, receiver);
  await waitUntil('both events delivered', async () => (await deliveries(dir)).filter((d) => d.status === 'delivered').length === 2);

  const after = await deliveries(dir);
  assert.deepEqual(after.map((d) => d.type), ['pulse_recovered', 'pulse_unhealthy'], 'nothing enqueued twice');
  assert.equal(after[1]?.id, enqueued[0]?.id);
  const accepted = receiver.received.slice(refused).filter((r) => r.status === 200);
  assert.deepEqual(accepted.map((r) => r.payload?.type).sort(), ['pulse_recovered', 'pulse_unhealthy']);
  assert.equal(accepted.find((r) => r.payload?.type === 'pulse_unhealthy')?.id, enqueued[0]?.id, 'the same webhook-id as before the kill');
  assert.ok(receiver.received.slice(0, refused).every((r) => r.id === enqueued[0]?.id), 'every attempt before the kill was of that delivery');
  const stopped = await second.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
});

test('estate serve SIGKILLed while its request to a receiver hangs: once the lease runs out, the restarted server sends it again with the same id, recorded once', async (t) => {
  const receiver = await startReceiver(t);
  // Hangs on the first request (holding it open), answers 204 to every later one.
  const seen: string[] = [];
  const held: (() => void)[] = [];
  const hanging = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push(String(req.headers['webhook-id']));
      if (seen.length === 1) held.push(() => res.destroy());
      else res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const end of held) end();
    return new Promise<void>((resolve) => hanging.close(() => resolve()));
  });
  const url = `http://127.0.0.1:${(hanging.address() as import('node:net').AddressInfo).port}/hook`;
  const dir = await tempDataDir(t);
  await writeFile(
    path.join(dir, 'estate.config.json'),
    JSON.stringify({ alerts: { hold: '0s' }, events: { watch_every: '1s' }, notify: [{ name: 'slow', url, secret_env: 'OPS_SECRET', timeout_ms: 1000, events: ['pulse_degraded'] }] }),
  );
  const first = await serve(t, dir, receiver);
  await appendFile(path.join(dir, 'health-pulse.jsonl'), pulseLine('degraded'));
  await waitUntil('the receiver holds the request open', () => seen.length === 1);
  await first.stop('SIGKILL');
  const [before] = await deliveries(dir);
  assert.deepEqual([before?.status, before?.attempt_count], ['pending', 0], 'the attempt under way was never recorded');

  // The lease (timeout_ms + 5 s) of the killed server must run out before anyone tries again.
  const second = await serve(t, dir, receiver);
  await waitUntil('delivered by the restarted server', async () => (await deliveries(dir))[0]?.status === 'delivered');
  const [after] = await deliveries(dir);
  assert.deepEqual([after?.id, after?.attempt_count, after?.attempts.map((a) => a.http_status)], [before?.id, 1, [204]]);
  assert.deepEqual(seen, [before?.id, before?.id], 'sent twice in all, with one webhook-id');
  const stopped = await second.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
});

test('estate serve: a schedule that misses its check-in sends schedule_late, then schedule_down, each signed, each once', async (t) => {
  const receiver = await startReceiver(t);
  const dir = await tempDataDir(t);
  const config = {
    schedules: [{ name: 'quick-backup', board: 'ops', match: { task_id: 'backup-*' }, every: '3s', grace: '2s' }],
    notify_scan: '1s', notify: [{ name: 'ops', url: receiver.url, secret_env: 'OPS_SECRET', events: ['schedule_late', 'schedule_down', 'schedule_recovered'] }],
  };
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify(config));
  const server = await serve(t, dir, receiver);
  const done = await runEstate(['work', 'complete', '--board', 'ops', '--task-id', 'backup-1', '--assignee', 'cron', '--title', 'backup', '--data-dir', dir]);
  assert.equal(done.code, 0, done.stderr);
  await waitUntil('schedule_down delivered', () => receiver.accepted().some((r) => r.payload?.type === 'schedule_down'));
  const got = receiver.accepted().map((r) => [r.payload?.type, r.payload?.data.subject, r.payload?.data.source]);
  assert.deepEqual(got, [
    ['schedule_late', 'quick-backup', 'schedule'],
    ['schedule_down', 'quick-backup', 'schedule'],
  ]);
  assert.ok(receiver.received.every((r) => r.payload !== undefined), 'every signature verified');
  assert.equal(new Set(receiver.received.map((r) => r.id)).size, 2);
  assert.equal((await server.stop()).code, 0);
});

test('estate serve: a receiver that never answers holds only the dispatcher: the API answers meanwhile, and the attempt times out and is tried again', async (t) => {
  // `receiver` only lends its secret: the target is a server that takes each request and never answers it.
  const receiver = await startReceiver(t);
  const open: (() => void)[] = [];
  const hanging = createServer((_req, res) => open.push(() => res.destroy()));
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => {
    hanging.closeAllConnections();
    hanging.close(() => resolve());
  }));
  const url = `http://127.0.0.1:${(hanging.address() as import('node:net').AddressInfo).port}/hook`;
  const dir = await tempDataDir(t);
  await writeFile(
    path.join(dir, 'estate.config.json'),
    JSON.stringify({ alerts: { hold: '0s' }, notify_scan: '1s', notify: [{ name: 'slow', url, secret_env: 'OPS_SECRET', timeout_ms: 4000, events: ['pulse_degraded'] }] }),
  );
  const server = await serve(t, dir, receiver);
  const key = await newKey(dir);
  const pulse = path.join(dir, 'health-pulse.jsonl');
  for (const node of ['a', 'b', 'c']) await appendFile(pulse, pulseLine('degraded').replace('"web-1"', `"${node}"`));
  await waitUntil('the receiver holds requests open', () => open.length >= 3);
  // While those requests hang, the API answers.
  for (const route of ['/healthz', '/events?limit=5', '/notify/deliveries']) {
    const r = await readResponse(await fetch(`${server.url}${route}`, { headers: { 'X-API-Key': key } }));
    assert.equal(r.status, 200, `${route}: ${r.text}`);
  }
  await waitUntil('an attempt timed out and waits for its retry', async () =>
    (await deliveries(dir)).some((d) => d.status === 'pending' && d.attempt_count >= 1),
  );
  const listed = await runEstate(['notify', 'log', '--json', '--data-dir', dir]);
  const timedOut = (listed.json.items as { last_error: string | null; last_http_status: number | null }[]).filter((d) => d.last_error !== null);
  assert.ok(timedOut.length >= 1);
  assert.deepEqual([timedOut[0]?.last_error, timedOut[0]?.last_http_status], ['timed out after 4000 ms', null]);
  const stopped = await server.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
  for (const end of open) end();
});
