import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';
import { startReceiver } from './helpers/webhook-receiver.ts';

// `estate notify test TARGET` and `estate notify log` through the real CLI,
// and their routes over HTTP, against a real receiver that verifies every
// signature with the Standard Webhooks library (test/helpers/webhook-receiver.ts).

async function dirWithTarget(t: Parameters<typeof tempDataDir>[0], url: string, extra: object = {}): Promise<string> {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ notify: [{ name: 'ops-hook', url, secret_env: 'OPS_HOOK_SECRET', ...extra }] }));
  return dir;
}

test('estate notify test sends a signed test event the receiver verifies; notify log lists it; the secret is printed nowhere', async (t) => {
  const receiver = await startReceiver(t);
  const dir = await dirWithTarget(t, receiver.url);
  const env = { OPS_HOOK_SECRET: receiver.secret };
  const sent = await runEstate(['notify', 'test', 'ops-hook', '--json', '--data-dir', dir], { env });
  assert.equal(sent.code, 0, sent.stderr);
  assert.equal(sent.json.status, 'delivered');
  assert.equal(sent.json.http_status, 200);
  assert.match(sent.json.id, /^msg_[0-9a-f]{32}$/);

  assert.equal(receiver.received.length, 1);
  const got = receiver.received[0];
  assert.ok(got?.payload, 'Webhook.verify accepted the signature');
  assert.equal(got.id, sent.json.id);
  assert.match(got.timestamp, /^\d{10}$/, 'webhook-timestamp is Unix seconds');
  assert.match(got.signature, /^v1,[A-Za-z0-9+/]+={0,2}$/);
  assert.equal(got.payload.type, 'test');
  assert.deepEqual(Object.keys(got.payload), ['type', 'timestamp', 'data']);
  assert.deepEqual(Object.keys(got.payload.data), ['ts', 'kind', 'source', 'subject', 'message']);
  assert.equal(got.payload.data.subject, 'ops-hook');

  const log = await runEstate(['notify', 'log', '--json', '--data-dir', dir], { env });
  assert.equal(log.code, 0, log.stderr);
  assert.equal(log.json.count, 1);
  assert.deepEqual([log.json.items[0].id, log.json.items[0].type, log.json.items[0].status, log.json.items[0].attempt_count, log.json.items[0].last_http_status], [sent.json.id, 'test', 'delivered', 1, 200]);
  const secretBytes = receiver.secret.slice('whsec_'.length);
  for (const text of [sent.stdout, sent.stderr, log.stdout, log.stderr]) assert.ok(!text.includes(secretBytes), 'no secret in the output');
  assert.ok(!log.stdout.includes(receiver.url), 'the target URL is not listed');

  // The table form, piped: a header line and one row.
  const table = await runEstate(['notify', 'log', '--data-dir', dir], { env });
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout.split('\n')[0] ?? '', /^created_at\ttarget\ttype\tsubject\tstatus\tattempt_count/);
  assert.match(table.stdout.split('\n')[1] ?? '', /\tops-hook\ttest\tops-hook\tdelivered\t1\t200\t/);
});

test('estate notify test: an unknown target, a missing or malformed secret and a failing receiver are one line on stderr with their exit codes', async (t) => {
  const receiver = await startReceiver(t);
  const dir = await dirWithTarget(t, receiver.url);
  const cases: { name: string; target: string; env: Record<string, string>; code: number; stderr: RegExp; answer?: number }[] = [
    { name: 'unknown target (exit 3, not found)', target: 'nope', env: { OPS_HOOK_SECRET: receiver.secret }, code: 3, stderr: /no notify target "nope" in the config: the targets are ops-hook/ },
    { name: 'secret unset (exit 2)', target: 'ops-hook', env: {}, code: 2, stderr: /OPS_HOOK_SECRET \(secret_env\) is not set/ },
    { name: 'not a whsec_ secret (exit 2)', target: 'ops-hook', env: { OPS_HOOK_SECRET: 'hunter2-not-a-secret' }, code: 2, stderr: /OPS_HOOK_SECRET \(secret_env\) does not hold a whsec_ secret/ },
    { name: 'the receiver answers 500 (exit 1)', target: 'ops-hook', env: { OPS_HOOK_SECRET: receiver.secret }, code: 1, stderr: /did not take the test event \(msg_[0-9a-f]{32}\): HTTP 500/, answer: 500 },
  ];
  for (const c of cases) {
    await t.test(c.name, async () => {
      receiver.answer(c.answer ?? 200);
      const r = await runEstate(['notify', 'test', c.target, '--data-dir', dir], { env: c.env });
      assert.equal(r.code, c.code, r.stderr);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, c.stderr);
      assert.ok(!r.stderr.includes('hunter2'), 'the value of the variable is never shown');
    });
  }
  const log = await runEstate(['notify', 'log', '--json', '--status', 'failed', '--data-dir', dir]);
  assert.equal(log.code, 0, log.stderr);
  assert.deepEqual(log.json.items.map((d: { status: string; last_error: string }) => [d.status, d.last_error]), [['failed', 'HTTP 500']]);
});

test('GET /notify/deliveries needs a credential with read; POST /notify/targets/{target}/test needs write; both answer as the CLI does', async (t) => {
  const receiver = await startReceiver(t);
  const dir = await dirWithTarget(t, receiver.url);
  const key = await newKey(dir);
  const server = await startServer(t, dir, { env: { OPS_HOOK_SECRET: receiver.secret } });
  assert.equal((await server.get('/notify/deliveries')).status, 403);
  assert.equal((await server.request('POST', '/notify/targets/ops-hook/test')).status, 403);
  const sent = await server.request('POST', '/notify/targets/ops-hook/test', { headers: { 'X-API-Key': key } });
  assert.equal(sent.status, 200, sent.text);
  assert.equal(receiver.accepted().length, 1);
  assert.equal((await server.request('POST', '/notify/targets/nope/test', { headers: { 'X-API-Key': key } })).status, 404);
  const listed = await server.get('/notify/deliveries?limit=5', { 'X-API-Key': key });
  assert.equal(listed.status, 200, listed.text);
  assert.deepEqual([listed.json.count, listed.json.limit, listed.json.items[0].id], [1, 5, sent.json.id]);
  assert.equal((await server.get('/notify/deliveries?limit=0', { 'X-API-Key': key })).status, 422);
  assert.equal((await server.get('/notify/deliveries?status=lost', { 'X-API-Key': key })).status, 422);
});

test('a notify outbox file that is not valid JSON is never overwritten: notify log and notify test say so on one line, exit 1, and send nothing', async (t) => {
  const receiver = await startReceiver(t);
  const dir = await dirWithTarget(t, receiver.url);
  const { mkdir, readFile } = await import('node:fs/promises');
  await mkdir(path.join(dir, 'notify'));
  const file = path.join(dir, 'notify', 'outbox.json');
  await writeFile(file, '{"version": 1, "deliveries": [tor');
  for (const args of [['notify', 'log'], ['notify', 'test', 'ops-hook']]) {
    const r = await runEstate([...args, '--data-dir', dir], { env: { OPS_HOOK_SECRET: receiver.secret } });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^estate: the notify outbox \(notify\/outbox\.json\) is not valid JSON; it is left as it is: move it aside to start a new one\n$/);
  }
  assert.equal(receiver.received.length, 0);
  assert.equal(await readFile(file, 'utf8'), '{"version": 1, "deliveries": [tor');
});

test('estate doctor checks each notify target\'s secret without sending; estate notify test and notify log work against a server (--url)', async (t) => {
  const receiver = await startReceiver(t);
  const dir = await dirWithTarget(t, receiver.url);
  const doctor = async (env: Record<string, string>) => {
    const r = await runEstate(['doctor', '--json', '--data-dir', dir], { env });
    return (r.json.checks as { name: string; status: string; detail: string; fix: string | null }[]).find((c) => c.name === 'notify ops-hook');
  };
  assert.equal((await doctor({ OPS_HOOK_SECRET: receiver.secret }))?.status, 'ok');
  const missing = await doctor({});
  assert.deepEqual([missing?.status, missing?.detail], ['fail', 'the environment variable OPS_HOOK_SECRET (secret_env) is not set: put the target\'s whsec_ secret in it']);
  assert.match(missing?.fix ?? '', /^export OPS_HOOK_SECRET="whsec_\$\(openssl rand -base64 32\)"/);
  assert.equal(receiver.received.length, 0, 'the doctor sends nothing');

  const key = await newKey(dir);
  const server = await startServer(t, dir, { env: { OPS_HOOK_SECRET: receiver.secret } });
  // The server's secret signs: the CLI calling it has none.
  const sent = await runEstate(['notify', 'test', 'ops-hook', '--json', '--url', server.url, '--api-key', key]);
  assert.equal(sent.code, 0, sent.stderr);
  assert.equal(receiver.accepted().at(-1)?.id, sent.json.id);
  const unknown = await runEstate(['notify', 'test', 'nope', '--url', server.url, '--api-key', key]);
  assert.equal(unknown.code, 3, unknown.stderr);
  assert.equal(unknown.stderr.trimEnd().split('\n').length, 1, unknown.stderr);
  const log = await runEstate(['notify', 'log', '--json', '--url', server.url, '--api-key', key]);
  assert.equal(log.code, 0, log.stderr);
  assert.deepEqual(log.json.items.map((d: { id: string }) => d.id), [sent.json.id]);
});
