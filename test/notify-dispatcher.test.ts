import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../src/config.ts';
import { startEventRecorder } from '../src/core/events/event-recorder.ts';
import { eventRecord } from '../src/core/events/stored-events.ts';
import { startNotifyDispatcher } from '../src/core/notify/notify-dispatcher.ts';
import { createDataDirStore } from '../src/core/store/data-dir-store.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { waitUntil } from './helpers/wait-until.ts';
import { startReceiver } from './helpers/webhook-receiver.ts';

// The dispatcher, over a data dir store, with a real receiver: what it does
// with deliveries it finds in the outbox, and with the events the recorder stores.

async function setUp(t: Parameters<typeof tempDataDir>[0]) {
  const receiver = await startReceiver(t);
  const dir = await tempDataDir(t);
  const store = createDataDirStore(dir);
  t.after(() => store.close());
  const config = parseConfig(JSON.stringify({ notify: [{ name: 'ops', url: receiver.url, secret_env: 'OPS_SECRET' }] }), 'estate.config.json');
  const start = (secrets: Record<string, string | undefined>) => {
    const lines: string[] = [];
    const recorder = startEventRecorder(
      { dataDir: dir, store, staleAfterS: 900, keepMs: 90 * 86_400_000, watch: { schedules: [], holdMs: 0, thisNode: 'n' }, everyMs: 1000, now: () => new Date() },
      { recorded: () => {}, failed: (what, err) => lines.push(`${what} ${String(err)}`) },
    );
    const dispatcher = startNotifyDispatcher(
      { store, targets: config.notify, secrets, catchUpMs: 3_600_000, startedAt: new Date(), now: () => new Date() },
      { enqueued: () => {}, attempted: (d, a, r) => lines.push(`${d.id} ${r.status} ${a.error ?? a.http_status}`), failed: (what, err) => lines.push(`${what} ${String(err)}`) },
    );
    t.after(async () => {
      await dispatcher.stop();
      await recorder.stop();
    });
    return { dispatcher, lines };
  };
  return { receiver, store, start, dir };
}

const delivery = (id: string, createdMsAgo: number, retryForMs: number) => {
  const created = Date.now() - createdMsAgo;
  return { id, target: 'ops', type: 'node_stale', subject: 'web-1', event_ts: new Date(created).toISOString(), body: '{"type":"node_stale"}', created_at: new Date(created).toISOString(), expires_at: new Date(created + retryForMs).toISOString() };
};

test('a delivery found only after its retry_for ran out is failed without being sent; one within it is delivered', async (t) => {
  const { receiver, store, start } = await setUp(t);
  await store.outbox.enqueue([delivery('msg_expired', 7_200_000, 3_600_000), delivery('msg_fresh', 1000, 3_600_000)]);
  const { dispatcher, lines } = start({ ops: receiver.secret });
  await waitUntil('both finished', async () => (await store.outbox.recent(10)).every((d) => d.status !== 'pending'));
  await dispatcher.stop();
  const byId = Object.fromEntries((await store.outbox.recent(10)).map((d) => [d.id, d]));
  assert.deepEqual([byId.msg_expired?.status, byId.msg_expired?.attempts[0]?.error], ['failed', 'not attempted: its retry_for ran out before it could be tried again']);
  assert.equal(byId.msg_fresh?.status, 'delivered');
  assert.deepEqual(receiver.received.map((r) => r.id), ['msg_fresh']);
  assert.deepEqual(lines.sort(), ['msg_expired failed not attempted: its retry_for ran out before it could be tried again', 'msg_fresh delivered 200']);
});

test('a backlog larger than the slots drains with each delivery sent once: a slot that frees claims again, never the same delivery twice', async (t) => {
  const { receiver, store, start } = await setUp(t);
  const ids = Array.from({ length: 40 }, (_, i) => `msg_backlog${String(i).padStart(2, '0')}`);
  await store.outbox.enqueue(ids.map((id) => delivery(id, 1000, 3_600_000)));
  const { dispatcher, lines } = start({ ops: receiver.secret });
  await waitUntil('every delivery finished', async () => (await store.outbox.recent(100)).every((d) => d.status === 'delivered'));
  await dispatcher.stop();
  assert.deepEqual(receiver.received.map((r) => r.id).sort(), ids);
  assert.ok((await store.outbox.recent(100)).every((d) => d.attempt_count === 1));
  assert.equal(lines.length, ids.length, lines.join('\n'));
});

test('a dispatcher starting reads back through every stored event within notify_catch_up, however many pages they take', async (t) => {
  const dir = await tempDataDir(t);
  const store = createDataDirStore(dir);
  t.after(() => store.close());
  const now = Date.now();
  // 25 events of the last 25 minutes, and one from before the catch-up window.
  for (let i = 25; i >= 0; i--) {
    const ts = new Date(now - (i === 25 ? 7_200_000 : i * 60_000)).toISOString();
    await store.events.write(eventRecord({ ts, kind: 'node_stale', source: 'heartbeat', subject: `n-${i}`, message: 'stale' }), () => new Date());
  }
  const config = parseConfig(JSON.stringify({ notify: [{ name: 'ops', url: 'http://127.0.0.1:9/never', secret_env: 'OPS_SECRET' }] }), 'estate.config.json');
  const dispatcher = startNotifyDispatcher(
    // The target started before them all; a page of 4 events at a time.
    { store, targets: config.notify, secrets: {}, catchUpMs: 3_600_000, scanPage: 4, startedAt: new Date(now - 10_800_000), now: () => new Date() },
    { enqueued: () => {}, attempted: () => {}, failed: () => {} },
  );
  t.after(() => dispatcher.stop());
  await waitUntil('the events within the window enqueued', async () => (await store.outbox.recent(100)).length >= 25);
  await dispatcher.stop();
  const subjects = (await store.outbox.recent(100)).map((d) => d.subject).sort();
  assert.deepEqual(subjects, Array.from({ length: 25 }, (_, i) => `n-${i}`).sort(), 'each once, none from before the window');
});

test('a target whose secret is not set: each attempt fails naming the variable, and is tried again', async (t) => {
  const { receiver, store, start } = await setUp(t);
  await store.outbox.enqueue([delivery('msg_nosecret', 0, 3_600_000)]);
  const { dispatcher } = start({});
  await waitUntil('an attempt recorded', async () => ((await store.outbox.recent(1))[0]?.attempt_count ?? 0) >= 1);
  await dispatcher.stop();
  const [d] = await store.outbox.recent(1);
  assert.deepEqual([d?.status, d?.attempts[0]?.http_status], ['pending', null]);
  assert.match(d?.attempts[0]?.error ?? '', /^the environment variable OPS_SECRET \(secret_env\) is not set/);
  assert.ok(d?.next_at && Date.parse(d.next_at) > Date.parse(d.attempts[0]?.at ?? ''), 'a retry is due later');
  assert.equal(receiver.received.length, 0);
});

test("a stale node's event is enqueued and sent on a hub whose live nodes' heartbeats are more than 1000 newer events", async (t) => {
  const { receiver, start, dir } = await setUp(t);
  const { writeFile, mkdir } = await import('node:fs/promises');
  const path = await import('node:path');
  const now = Date.now();
  // The live nodes' heartbeats are dated a minute ahead (a clock ahead), so each of their 1200 events is newer than the dead node's.
  const nodes = Array.from({ length: 1200 }, (_, i) => ({ name: `live-${i}`, last_seen: new Date(now + 60_000).toISOString(), status: 'up' }));
  // The silent node goes stale (stale_after 900 s) 2 s after the dispatcher starts, so its event is after the target's start.
  nodes.push({ name: 'dead', last_seen: new Date(now - 898_000).toISOString(), status: 'up' });
  const stateDir = path.join(dir, 'state');
  await mkdir(stateDir, { recursive: true });
  await writeFile(path.join(stateDir, 'heartbeat.json'), JSON.stringify({ nodes }));
  start({ ops: receiver.secret });
  await waitUntil('the dead node reported', () => receiver.accepted().some((w) => w.payload?.data.kind === 'node_stale' && w.payload.data.subject === 'dead'));
});
