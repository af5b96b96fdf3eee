import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { refusedUrl, startAnswering, startFake } from './helpers/fake-upstreams.ts';
import { newKey, startServer } from './helpers/server.ts';

/** The timeout of the providers that never answer; those that answer have a generous one, so a busy machine never makes them late. */
const TIMEOUT_MS = 1000;
const GENEROUS_MS = 30_000;
/** Providers that never answer: checked at once, they are all waited on together. */
const HANGING = 6;

async function estate(t: Parameters<typeof tempDataDir>[0], config: object) {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify(config));
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  return { dir, get: (route: string) => server.get(route, { 'X-API-Key': key }) };
}

test('providers are checked at once: fast, slow, refused and wrong status, bounded by the slowest timeout', async (t) => {
  // The hanging provider counts the requests it holds at once: checked one after another, it would hold one at a time.
  let holding = 0;
  let mostHeld = 0;
  const [fast, slowOk, teapot, hanging, refused] = await Promise.all([
    startAnswering(t, 200, { models: [] }),
    startAnswering(t, 200, {}, 100),
    startAnswering(t, 418),
    startFake(t, (_req, res) => {
      mostHeld = Math.max(mostHeld, ++holding);
      res.on('close', () => holding--);
    }),
    refusedUrl(),
  ]);
  const providers = [
    { name: 'fast', url: `${fast.url}/api/tags`, timeout_ms: GENEROUS_MS },
    { name: 'slow but in time', url: slowOk.url, timeout_ms: GENEROUS_MS },
    { name: 'teapot', url: teapot.url, timeout_ms: GENEROUS_MS, expect_status: 200 },
    { name: 'teapot, any status', url: teapot.url, timeout_ms: GENEROUS_MS },
    { name: 'refused', url: refused, timeout_ms: GENEROUS_MS },
    ...Array.from({ length: HANGING }, (_, i) => ({ name: `hanging ${i}`, url: `${hanging.url}/${i}`, timeout_ms: TIMEOUT_MS })),
  ];
  const { get } = await estate(t, { providers });
  const started = performance.now();
  const r = await get('/providers');
  const elapsed = performance.now() - started;
  assert.equal(r.status, 200, r.text);
  assert.equal(mostHeld, HANGING, 'every hanging provider was waited on at the same time');
  assert.ok(elapsed >= TIMEOUT_MS - 50, 'the hanging providers were waited for');
  const byName = new Map(r.json.items.map((i: { name: string }) => [i.name, i]));
  const expect: [string, boolean, number | null, RegExp | null][] = [
    ['fast', true, 200, null],
    ['slow but in time', true, 200, null],
    ['teapot', false, 418, /^answered 418, expected 200$/],
    ['teapot, any status', true, 418, null],
    ['refused', false, null, /^unreachable: connect ECONNREFUSED 127\.0\.0\.1:\d+$/],
    ['hanging 0', false, null, /^did not answer within 1000 ms$/],
  ];
  for (const [name, reachable, status, error] of expect) {
    const item = byName.get(name) as { reachable: boolean; status: number | null; error: string | null; latency_ms: number | null; checked_at: string };
    assert.equal(item.reachable, reachable, name);
    assert.equal(item.status, status, name);
    if (error) assert.match(item.error ?? '', error, name);
    else assert.equal(item.error, null, name);
    assert.ok(!Number.isNaN(Date.parse(item.checked_at)));
  }
  assert.ok((byName.get('slow but in time') as { latency_ms: number }).latency_ms >= 90);
  assert.equal((byName.get('hanging 0') as { latency_ms: number | null }).latency_ms, null);
  assert.deepEqual([r.json.count, r.json.reachable, r.json.unreachable], [providers.length, 3, 2 + HANGING]);
  assert.deepEqual(fast.requests.map((q) => q.path), ['/api/tags']);
});

test('the provider report is cached for providers_cache_s', async (t) => {
  const upstream = await startAnswering(t, 200);
  const cases: [number, number][] = [
    [60, 1],
    [0, 2],
  ];
  for (const [cacheS, checks] of cases) {
    await t.test(`providers_cache_s ${cacheS}`, async (t) => {
      const before = upstream.requests.length;
      const { get } = await estate(t, { providers: [{ name: 'p', url: upstream.url }], providers_cache_s: cacheS });
      const concurrent = cacheS ? await Promise.all([get('/providers'), get('/providers'), get('/providers')]) : [await get('/providers')];
      assert.ok(concurrent.every((c) => c.status === 200 && c.json.reachable === 1));
      await get('/providers');
      assert.equal(upstream.requests.length - before, checks);
    });
  }
});

test('no providers configured is an empty report, not an error', async (t) => {
  const { get } = await estate(t, {});
  const r = await get('/providers');
  assert.equal(r.status, 200);
  assert.deepEqual([r.json.items, r.json.count, r.json.reachable], [[], 0, 0]);
});

test('estate providers prints a table, and --json the route\'s body shape', async (t) => {
  const [up, refused] = await Promise.all([startAnswering(t, 200), refusedUrl()]);
  const { dir } = await estate(t, {
    providers: [
      { name: 'local-llm', url: up.url },
      { name: 'gone', url: refused, timeout_ms: 300 },
    ],
  });
  const table = await runEstate(['providers', '--data-dir', dir]);
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /^local-llm\ttrue\t200\t/m, 'piped: TSV');
  assert.match(table.stdout, /^gone\tfalse\t\t.*unreachable: connect ECONNREFUSED/m);
  const json = await runEstate(['providers', '--json', '--data-dir', dir]);
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(json.json.items.map((i: { name: string; reachable: boolean }) => [i.name, i.reachable]), [['local-llm', true], ['gone', false]]);
});
