import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type TestContext, test } from 'node:test';
import { runEstate, startEstate } from './helpers/cli.ts';
import { nodeDir, printedTs } from './helpers/collector.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { PATIENCE_MS, waitUntil } from './helpers/wait-until.ts';

// estate collect --url against a real hub: `estate serve` as a child
// process on 127.0.0.1, the collector as another, keys made with `estate
// keys create`, what the hub stored read back through its API.

const LINUX = process.platform === 'linux';
type After = Pick<TestContext, 'after'>;

interface Hub {
  url: string;
  dir: string;
  ingestKey: string;
  readKey: string;
  stop: () => Promise<void>;
  restart: () => Promise<void>;
}

async function startHub(t: After): Promise<Hub> {
  const dir = await tempDataDir(t);
  const key = async (...args: string[]) => {
    const r = await runEstate(['keys', 'create', '--data-dir', dir, ...args]);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout.trim();
  };
  const hub: Hub = { url: '', dir, ingestKey: await key('--user', 'node-a', '--scope', 'ingest', '--node', 'a'), readKey: await key('--user', 'ops', '--scope', 'read'), stop: async () => {}, restart: async () => {} };
  let port = '0';
  const serve = async () => {
    const server = startEstate(t, ['serve', '--data-dir', dir, '--host', '127.0.0.1', '--port', port]);
    await server.waitForStdout('the hub listening', (out) => /serving .* at http:\/\/127\.0\.0\.1:\d+/.test(out));
    hub.url = /at (http:\/\/127\.0\.0\.1:\d+)/.exec(server.stdout())![1]!;
    port = new URL(hub.url).port;
    hub.stop = async () => {
      const { code, stderr } = await server.stop();
      assert.equal(code, 0, stderr);
    };
  };
  hub.restart = serve;
  await serve();
  return hub;
}

/** The records of node a the hub holds in `series`, oldest first. */
async function stored(hub: Hub, series: 'trends' | 'disk' | 'health/pulse'): Promise<any[]> {
  const r = await fetch(`${hub.url}/${series}?node=a&limit=1000`, { headers: { 'X-API-Key': hub.readKey }, signal: AbortSignal.timeout(PATIENCE_MS) });
  assert.equal(r.status, 200);
  return ((await r.json()) as { items: any[] }).items.reverse();
}
const storedTs = async (hub: Hub) => (await stored(hub, 'trends')).map((p) => p.ts as string);

const collect = (url: string, key: string, dir: string, ...more: string[]) => ['collect', '--url', url, '--api-key', key, '--data-dir', dir, '--node', 'a', '--json', ...more];
const once = (url: string, key: string, dir: string) => runEstate(['collect', '--once', ...collect(url, key, dir).slice(1)]);

test('a hub stopped while the collector takes 360 samples (every 100 ms) and started again stores every one once, oldest first, with no gap', { skip: !LINUX }, async (t) => {
  const COUNT = 360;
  const hub = await startHub(t);
  await hub.stop();
  const dir = await nodeDir(t);
  const collector = startEstate(t, collect(hub.url, hub.ingestKey, dir, '--interval', '100ms'));
  await collector.waitForStdout(`${COUNT} samples`, (out) => printedTs(out).length >= COUNT, 5 * PATIENCE_MS);
  await hub.restart();
  await waitUntil(`the hub has the first ${COUNT} samples`, async () => (await storedTs(hub)).length >= COUNT);
  await waitUntil('the collector says the hub takes samples again', () => /takes samples again/.test(collector.stderr()));
  const stopped = await collector.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
  const sampled = printedTs(stopped.stdout);
  const ts = await storedTs(hub);
  assert.deepEqual(ts, sampled.slice(0, ts.length), 'every sample, oldest first, none twice, no gap');
  const pulses = (await stored(hub, 'health/pulse')).map((p) => p.ts);
  assert.deepEqual(pulses, ts, 'one pulse entry per sample');
  const disks = await stored(hub, 'disk');
  assert.equal(new Set(disks.map((d) => `${d.ts} ${d.mount}`)).size, disks.length, 'no disk snapshot twice');
});

test('a proxy that drops the hub\'s answer after the hub stored a batch: the batch is sent again and stored once', { skip: !LINUX }, async (t) => {
  const hub = await startHub(t);
  let drop = 1;
  const answers: unknown[] = [];
  const proxy = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const r = await fetch(hub.url + req.url, { method: req.method, headers: { 'Content-Type': 'application/json', 'X-API-Key': String(req.headers['x-api-key']) }, body });
    const text = await r.text();
    answers.push(JSON.parse(text));
    if (drop-- > 0) return req.socket.destroy();
    res.writeHead(r.status, { 'Content-Type': 'application/json' }).end(text);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => (proxy.closeAllConnections(), proxy.close(() => resolve()))));
  const via = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  const dir = await nodeDir(t);

  const first = await once(via, hub.ingestKey, dir);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stderr, /cannot reach .*wait in the spool/);
  assert.deepEqual(await storedTs(hub), [first.json.trend.ts], 'the hub stored it; its answer was lost');
  const second = await once(via, hub.ingestKey, dir);
  assert.equal(second.code, 0, second.stderr);
  assert.equal(second.stderr, '');
  assert.deepEqual(answers, [{ stored: 1, duplicates: 0 }, { stored: 1, duplicates: 1 }]);
  assert.deepEqual(await storedTs(hub), [first.json.trend.ts, second.json.trend.ts]);
});

test('a collector killed (SIGKILL) while the hub stores a batch whose answer it never gets loses nothing, and the hub stores nothing twice', { skip: !LINUX }, async (t) => {
  const hub = await startHub(t);
  let forwarded = 0;
  const proxy = createServer(async (req) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    await fetch(hub.url + req.url, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-API-Key': String(req.headers['x-api-key']) }, body });
    forwarded++;
    // The answer is held: the collector is killed waiting for it.
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => (proxy.closeAllConnections(), proxy.close(() => resolve()))));
  const via = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  const dir = await nodeDir(t);
  const collector = startEstate(t, collect(via, hub.ingestKey, dir, '--interval', '100ms'));
  await waitUntil('the hub stored a batch and 5 samples are taken', () => forwarded >= 1 && printedTs(collector.stdout()).length >= 5);
  const killed = await collector.stop('SIGKILL');
  const sampled = printedTs(killed.stdout);
  const before = await storedTs(hub);
  assert.ok(before.length >= 1);

  const last = await once(hub.url, hub.ingestKey, dir);
  assert.equal(last.code, 0, last.stderr);
  const after = await storedTs(hub);
  assert.deepEqual(after.slice(0, sampled.length), sampled, 'every sample taken before the kill, once, in order');
  assert.equal(after.at(-1), last.json.trend.ts);
  assert.equal(new Set(after).size, after.length);
});

test('past collect.spool_max_bytes the oldest samples are dropped and said; the hub gets the rest and the pulse that says so', { skip: !LINUX }, async (t) => {
  const hub = await startHub(t);
  await hub.stop();
  const dir = await nodeDir(t, { collect: { spool_max_bytes: 4096 } });
  const runs: Awaited<ReturnType<typeof once>>[] = [];
  for (let i = 0; i < 10 && !runs.some((r) => /dropped the \d+ oldest/.test(r.stderr)); i++) runs.push(await once(hub.url, hub.ingestKey, dir));
  const dropper = runs.find((r) => /dropped the \d+ oldest/.test(r.stderr));
  assert.ok(dropper, 'a run said it dropped the oldest');
  assert.ok(dropper.json.spool_dropped > 0);
  await hub.restart();
  const last = await once(hub.url, hub.ingestKey, dir);
  assert.equal(last.code, 0, last.stderr);
  const ts = await storedTs(hub);
  const taken = [...runs.map((r) => r.json.trend.ts as string), last.json.trend.ts];
  assert.ok(ts.length < taken.length, 'some were dropped');
  assert.deepEqual(ts, taken.slice(taken.length - ts.length), 'the newest, oldest first');
  const pulses = await stored(hub, 'health/pulse');
  const noted = pulses.find((p) => /spool was full/.test(p.checks.collector?.message ?? ''));
  assert.ok(noted, 'the next sample\'s pulse says so');
  assert.equal(noted.checks.collector.status, 'degraded');
});

test('an ingest key for node a, used by node b, is refused: exit 4, one line, the sample kept', { skip: !LINUX }, async (t) => {
  const hub = await startHub(t);
  const dir = await nodeDir(t);
  const r = await runEstate(['collect', '--once', '--url', hub.url, '--api-key', hub.ingestKey, '--data-dir', dir, '--node', 'b']);
  assert.equal(r.code, 4);
  assert.equal(r.stderr.split('\n').filter((l) => l).length, 1, r.stderr);
  assert.match(r.stderr, /answered 403: .*node "a" only.*; the samples wait in the spool/);
});
