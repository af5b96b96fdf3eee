import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { ConcurrencyLimit } from '../src/core/limit-concurrency.ts';
import { EstateError } from '../src/errors.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { type FakeServer, fakeRepos, sendJson, startFake } from './helpers/fake-upstreams.ts';
import { newKey, startServer, type TestResponse } from './helpers/server.ts';
import { waitUntil } from './helpers/wait-until.ts';

// Expensive routes (external sources, aggregates) run a bounded number at
// once; a burst beyond the queue is refused with 503 + Retry-After instead of
// piling up memory or upstream calls. Identical upstream calls in flight are
// shared (TtlCache), so a burst on one route costs one upstream call.

test('ConcurrencyLimit: at most maxConcurrent run, maxQueued wait in order, the rest are refused; a failure frees its slot', async () => {
  const limit = new ConcurrencyLimit({ maxConcurrent: 2, maxQueued: 2, maxWaitMs: 60_000 });
  const gates: (() => void)[] = [];
  const order: number[] = [];
  const job = (i: number, fail = false) => () =>
    new Promise<number>((resolve, reject) => {
      order.push(i);
      gates.push(() => (fail ? reject(new Error(`job ${i}`)) : resolve(i)));
    });
  const results = [0, 1, 2, 3, 4].map((i) => limit.run(job(i, i === 0)).then((v) => ({ ok: v }), (err: unknown) => ({ err })));
  const refused = (await results[4]) as { err: unknown };
  assert.ok(refused.err instanceof EstateError && refused.err.code === 'unavailable');
  assert.deepEqual(refused.err.headers, { 'Retry-After': '1' });
  assert.deepEqual(limit.load, { running: 2, queued: 2 });
  assert.deepEqual(order, [0, 1]);
  gates[0]?.();
  assert.ok('err' in ((await results[0]) as object), 'a failure is passed on');
  await waitUntil('job 2 starts', () => order.length === 3);
  assert.deepEqual(order, [0, 1, 2], 'first come, first served');
  for (let i = 1; i < 4; i++) {
    await waitUntil(`job ${i} holds a gate`, () => gates.length > i);
    gates[i]?.();
  }
  assert.deepEqual(await Promise.all(results.slice(1, 4)), [{ ok: 1 }, { ok: 2 }, { ok: 3 }]);
  assert.deepEqual(limit.load, { running: 0, queued: 0 });
});

test('ConcurrencyLimit: a call that waits longer than maxWaitMs is refused without running', async () => {
  const limit = new ConcurrencyLimit({ maxConcurrent: 1, maxQueued: 5, maxWaitMs: 50 });
  let release!: () => void;
  const first = limit.run(() => new Promise<void>((r) => (release = r)));
  let ran = false;
  await assert.rejects(
    limit.run(async () => {
      ran = true;
    }),
    (err: unknown) => err instanceof EstateError && err.code === 'unavailable',
  );
  assert.equal(ran, false);
  assert.deepEqual(limit.load, { running: 1, queued: 0 });
  release();
  await first;
  assert.deepEqual(limit.load, { running: 0, queued: 0 });
});

test('ConcurrencyLimit: per client, at most perClient run and perClientQueued wait (429 past it); free slots go to the clients in turn', async () => {
  const limit = new ConcurrencyLimit({ maxConcurrent: 2, maxQueued: 10, maxWaitMs: 60_000, perClient: 1, perClientQueued: 3 });
  const gates = new Map<string, () => void>();
  const order: string[] = [];
  const job = (name: string) => () =>
    new Promise<string>((resolve) => {
      order.push(name);
      gates.set(name, () => resolve(name));
    });
  const call = (client: string, name: string) => limit.run(job(name), client).then((v) => ({ ok: v }), (err: unknown) => ({ err }));
  const a = ['a1', 'a2', 'a3', 'a4', 'a5'].map((name) => call('a', name));
  const refused = (await a[4]) as { err: unknown };
  assert.ok(refused.err instanceof EstateError && refused.err.code === 'rate_limited', 'past its own line, a client is refused (429)');
  assert.deepEqual(refused.err.headers, { 'Retry-After': '1' });
  assert.deepEqual(order, ['a1'], 'one of its calls runs, though another slot is free');
  const b = ['b1', 'b2'].map((name) => call('b', name));
  assert.deepEqual(order, ['a1', 'b1'], "another client takes the free slot at once, ahead of a's line");
  assert.deepEqual(limit.load, { running: 2, queued: 4 });
  gates.get('a1')?.();
  await waitUntil('a2 starts', () => order.length === 3);
  gates.get('b1')?.();
  await waitUntil('b2 starts', () => order.length === 4);
  gates.get('a2')?.();
  await waitUntil('a3 starts', () => order.length === 5);
  assert.deepEqual(order, ['a1', 'b1', 'a2', 'b2', 'a3'], 'each client in turn');
  for (const name of ['b2', 'a3']) gates.get(name)?.();
  await waitUntil('a4 starts', () => order.length === 6);
  gates.get('a4')?.();
  assert.deepEqual(await Promise.all([...a.slice(0, 4), ...b]), ['a1', 'a2', 'a3', 'a4', 'b1', 'b2'].map((ok) => ({ ok })));
  assert.deepEqual(limit.load, { running: 0, queued: 0 });
});

/** An upstream that holds every request until the test releases it. */
async function gatedUpstream(t: Parameters<typeof startFake>[0], answer: (res: ServerResponse, path: string, fake: FakeServer) => void) {
  const held: (() => void)[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const fake: FakeServer = await startFake(t, (_req, res, seen) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    held.push(() => {
      inFlight--;
      answer(res, seen.path, fake);
    });
  });
  return {
    fake,
    held,
    maxInFlight: () => maxInFlight,
    releaseAll: () => held.splice(0).forEach((release) => release()),
  };
}

async function configured(t: Parameters<typeof tempDataDir>[0], config: Record<string, unknown>) {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify(config));
  const key = await newKey(dir);
  return { key, server: await startServer(t, dir) };
}

test('a burst on an expensive route: max_concurrent reach the upstream, max_queued wait, the rest get 503 with Retry-After', async (t) => {
  const upstream = await gatedUpstream(t, (res) => sendJson(res, 200, [], { 'X-Total-Count': '0' }));
  const { key, server } = await configured(t, {
    forge: { url: upstream.fake.url, timeout_ms: 60_000, cache_s: 0 },
    serve: { expensive_routes: { max_concurrent: 2, max_queued: 2, max_wait_ms: 60_000 } },
  });
  const answers: TestResponse[] = [];
  // Eight different repositories: nothing to share, each needs its own upstream call.
  const burst = Array.from({ length: 8 }, (_, i) => server.get(`/forgejo-proxy/issues/org/repo-${i}`, { 'X-API-Key': key }).then((r) => answers.push(r)));
  await waitUntil('two upstream calls and four refusals', () => upstream.held.length === 2 && answers.length === 4);
  for (const r of answers) {
    assert.equal(r.status, 503);
    assert.equal(r.headers.get('retry-after'), '1');
    assert.match(r.json.detail, /busy/);
  }
  const cheap = await server.get('/trends', { 'X-API-Key': key });
  assert.equal(cheap.status, 200, 'other routes answer meanwhile');
  upstream.releaseAll();
  await waitUntil('the two queued calls reach the upstream', () => upstream.held.length === 2);
  upstream.releaseAll();
  await Promise.all(burst);
  assert.deepEqual(answers.map((r) => r.status).sort(), [200, 200, 200, 200, 503, 503, 503, 503]);
  assert.equal(upstream.maxInFlight(), 2);
  assert.equal(upstream.fake.requests.length, 4);
});

test('identical calls in flight are coalesced: a burst of 20 on /providers or /forgejo-proxy/repos costs one upstream call', async (t) => {
  const cases: [string, (url: string) => Record<string, unknown>, (res: ServerResponse, p: string, fake: FakeServer) => void][] = [
    ['/providers', (url) => ({ providers: [{ name: 'llm', url: `${url}/api/tags` }], providers_cache_s: 60 }), (res) => sendJson(res, 200, { models: [] })],
    [
      '/forgejo-proxy/repos',
      (url) => ({ forge: { url, timeout_ms: 60_000, cache_s: 60 } }),
      (res, _p, fake) => sendJson(res, 200, { ok: true, data: fakeRepos(3, fake.url) }, { 'X-Total-Count': '3' }),
    ],
  ];
  for (const [route, config, answer] of cases) {
    await t.test(route, async (t) => {
      const upstream = await gatedUpstream(t, answer);
      const { key, server } = await configured(t, config(upstream.fake.url));
      const burst = Promise.all(Array.from({ length: 20 }, () => server.get(route, { 'X-API-Key': key })));
      await waitUntil('the first upstream call', () => upstream.held.length === 1);
      upstream.releaseAll();
      const answers = await burst;
      assert.deepEqual(new Set(answers.map((r) => r.status)), new Set([200]));
      assert.equal(upstream.fake.requests.length, 1, 'one upstream call for the whole burst');
      assert.equal(new Set(answers.map((r) => r.text)).size, 1, 'everyone got the same answer');
    });
  }
});
