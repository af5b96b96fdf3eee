import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { EstateError } from '../src/errors.ts';
import { OUTBOX_FILE } from '../src/core/notify/data-dir-outbox.ts';
import type { Delivery, NewDelivery } from '../src/core/notify/outbox-types.ts';
import { createDataDirStore } from '../src/core/store/data-dir-store.ts';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { startReceiver } from './helpers/webhook-receiver.ts';

// A damaged notify/outbox.json (valid JSON, not an outbox: a delivery that is
// not an object, a field of the wrong type) makes every outbox call fail with
// the module's "is not an outbox" error, never a TypeError nor an answer made
// of the damage, and the file is left byte for byte as it was.

const NOW = '2026-12-01T10:00:00.000Z';
const LATER = '2026-12-01T11:00:00.000Z';

const fresh: NewDelivery = {
  id: 'msg_00000000000000000000000000000001',
  target: 'hook',
  type: 'schedule_down',
  subject: 'job-1',
  event_ts: NOW,
  body: '{"type":"schedule_down"}',
  created_at: NOW,
  expires_at: LATER,
};

/** A well-formed pending delivery, due now: each case below damages one thing of it. */
const good: Delivery = {
  ...fresh,
  id: 'msg_00000000000000000000000000000002',
  status: 'pending',
  attempt_count: 1,
  attempts: [{ at: NOW, http_status: 500, error: 'HTTP 500', duration_ms: 3 }],
  next_at: NOW,
  delivered_at: null,
  lease_owner: null,
  lease_until: null,
};

const outbox = (fields: object) => JSON.stringify({ version: 1, targets: { hook: { since: NOW } }, deliveries: [good], ...fields });
const withDelivery = (change: Record<string, unknown>) => outbox({ deliveries: [{ ...good, ...change }] });

const DAMAGED: [string, string][] = [
  ['a delivery that is null', outbox({ deliveries: [null] })],
  ['deliveries that are a number and a string', outbox({ deliveries: [1, 'x'] })],
  ['a delivery that is a list', outbox({ deliveries: [[good]] })],
  ['an id that is a number', withDelivery({ id: 5 })],
  ['a target that is missing', withDelivery({ target: undefined })],
  ['a body that is an object', withDelivery({ body: { type: 'schedule_down' } })],
  ['a status estate does not know', withDelivery({ status: 'lost' })],
  ['an attempt_count that is a string', withDelivery({ attempt_count: '1' })],
  ['attempts that are null', withDelivery({ attempts: null })],
  ['attempts that are a string', withDelivery({ attempts: 'xy' })],
  ['an attempt that is null', withDelivery({ attempts: [null] })],
  ['an attempt whose http_status is a string', withDelivery({ attempts: [{ ...good.attempts[0], http_status: '500' }] })],
  ['a next_at that is a number', withDelivery({ next_at: 5 })],
  ['a created_at that is not a time', withDelivery({ created_at: 'yesterday' })],
  ['a lease_until that is an object', withDelivery({ lease_until: {} })],
  ['a lease_owner that is a number', withDelivery({ lease_owner: 7 })],
  ['a target entry that is null', outbox({ targets: { hook: null } })],
  ['a target since that is a number', outbox({ targets: { hook: { since: 5 } } })],
  ['trimmed ids that are a string', outbox({ sent: 'x' })],
  ['a trimmed id whose time is a number', outbox({ sent: { msg_00000000000000000000000000000009: 5 } })],
  ['a version estate does not know', outbox({ version: 2 })],
  ['deliveries that are an object', outbox({ deliveries: {} })],
];

const NOT_AN_OUTBOX = /^the notify outbox \(notify\/outbox\.json\) is not an outbox \(.+\); it is left as it is: move it aside to start a new one$/;

/** Every Outbox call, each of which must refuse the damaged file. */
const CALLS: [string, (store: ReturnType<typeof createDataDirStore>) => Promise<unknown>][] = [
  ['targetSince', (s) => s.outbox.targetSince('hook', new Date(NOW))],
  ['targetSince of a new target', (s) => s.outbox.targetSince('new', new Date(NOW))],
  ['targets', (s) => s.outbox.targets()],
  ['enqueue', (s) => s.outbox.enqueue([fresh])],
  ['claim', (s) => s.outbox.claim('me', ['hook'], 5, new Date(NOW), 30_000)],
  ['finish', (s) => s.outbox.finish(good.id, 'me', { at: NOW, http_status: 204, error: null, duration_ms: 1 }, { status: 'delivered' })],
  ['recent', (s) => s.outbox.recent(10)],
  ['prune', (s) => s.outbox.prune(new Date(LATER))],
  ['pages', async (s) => {
    for await (const page of s.outbox.pages(10)) void page;
  }],
  ['restore', (s) => s.outbox.restore([{ ...good, id: fresh.id }])],
];

test('a notify outbox that is valid JSON but not an outbox: every call says so, none crashes or answers the damage, the file stays as it is', async (t) => {
  const dir = await tempDataDir(t);
  const file = path.join(dir, OUTBOX_FILE);
  await mkdir(path.dirname(file), { recursive: true });
  const store = createDataDirStore(dir);
  t.after(() => store.close());

  // The well-formed base is an outbox: the cases below fail for their damage alone.
  await writeFile(file, outbox({}));
  assert.deepEqual((await store.outbox.recent(10)).map((d) => d.id), [good.id]);

  for (const [name, text] of DAMAGED) {
    await t.test(name, async () => {
      await writeFile(file, text);
      for (const [call, run] of CALLS) {
        await assert.rejects(run(store), (err: unknown) => {
          assert.ok(err instanceof EstateError, `${call}: ${String(err)}`);
          assert.equal(err.code, 'unavailable', call);
          assert.match(err.message, NOT_AN_OUTBOX, call);
          return true;
        }, call);
        assert.equal(await readFile(file, 'utf8'), text, `${call} left the file as it was`);
      }
    });
  }
});

test('estate notify log and notify test on an outbox whose delivery is null: one line saying it is not an outbox, exit 1, nothing sent, the file as it was', async (t) => {
  const receiver = await startReceiver(t);
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ notify: [{ name: 'ops-hook', url: receiver.url, secret_env: 'OPS_HOOK_SECRET' }] }));
  const file = path.join(dir, OUTBOX_FILE);
  await mkdir(path.dirname(file), { recursive: true });
  const text = outbox({ deliveries: [null] });
  await writeFile(file, text);
  for (const args of [['notify', 'log'], ['notify', 'test', 'ops-hook']]) {
    const r = await runEstate([...args, '--data-dir', dir], { env: { OPS_HOOK_SECRET: receiver.secret } });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^estate: the notify outbox \(notify\/outbox\.json\) is not an outbox \(deliveries\[0\] is not a delivery\); it is left as it is: move it aside to start a new one\n$/);
  }
  assert.equal(receiver.received.length, 0);
  assert.equal(await readFile(file, 'utf8'), text);
});
