import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createKey } from '../src/core/keys/key-store.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { sampleOf, samplesOf, type TestSample } from './helpers/samples.ts';
import { startServer, type TestServer } from './helpers/server.ts';

// POST /ingest (DESIGN.md 7a) through the real server on 127.0.0.1:0: what
// the hub takes, what it refuses and with which answer, and that a sample is
// stored once whatever is sent again.

type Json = Record<string, any>;

const MINUTE = 60_000;

/** A deep copy of `sample` changed by `change`. */
function changed(sample: TestSample, change: (s: Json) => void): TestSample {
  const copy = structuredClone(sample) as Json;
  change(copy);
  return copy as TestSample;
}

async function ingest(server: TestServer, key: string, samples: unknown) {
  return server.request('POST', '/ingest', { headers: { 'X-API-Key': key }, body: { samples } });
}

async function nodeNames(server: TestServer, key: string): Promise<string[]> {
  const r = await server.get('/nodes', { 'X-API-Key': key });
  assert.equal(r.status, 200, r.text);
  return r.json.items.map((n: { name: string }) => n.name);
}

test('a sample the hub cannot take is 422 at the loc of the rule it breaks, and nothing of its request is stored', async (t) => {
  const dir = await tempDataDir(t);
  const key = (await createKey(dir, { userId: 'ops' })).key;
  const server = await startServer(t, dir);
  const now = new Date();
  const good = sampleOf('web-1', new Date(now.getTime() - MINUTE));
  const future = new Date(now.getTime() + 10 * MINUTE).toISOString();
  // A type (undefined: any) at a loc; numbers of a body are refused as `int_type` whatever their schema (validation-issues.ts cannot tell).
  const cases: [string, unknown, (string | number)[], string | undefined][] = [
    ['a ts that is not a date', [changed(good, (s) => (s.trend.ts = 'yesterday'))], ['body', 'samples', 0, 'trend', 'ts'], 'datetime_parsing'],
    ['a ts without its offset', [changed(good, (s) => (s.trend.ts = '2026-11-21T13:05:00'))], ['body', 'samples', 0, 'trend', 'ts'], 'datetime_parsing'],
    ['a ts on 30 February', [changed(good, (s) => (s.trend.ts = '2026-02-30T13:05:00Z'))], ['body', 'samples', 0, 'trend', 'ts'], 'datetime_parsing'],
    ['a ts as a number', [changed(good, (s) => (s.trend.ts = 1_764_000_000))], ['body', 'samples', 0, 'trend', 'ts'], 'string_type'],
    [
      'a ts 10 minutes ahead',
      [changed(good, (s) => [s.trend, s.pulse, ...s.disks].forEach((p: Json) => (p.ts = future)))],
      ['body', 'samples', 0, 'trend', 'ts'],
      'datetime_past',
    ],
    ['a disk snapshot of another node', [changed(good, (s) => (s.disks[0].node = 'web-2'))], ['body', 'samples', 0, 'disks', 0, 'node'], 'value_error'],
    ['a pulse of another instant', [changed(good, (s) => (s.pulse.ts = now.toISOString()))], ['body', 'samples', 0, 'pulse', 'ts'], 'value_error'],
    ['the second sample bad, the first good', [good, changed(good, (s) => (s.pulse.node = 'web-9'))], ['body', 'samples', 1, 'pulse', 'node'], 'value_error'],
    ['a figure of the wrong type', [changed(good, (s) => (s.trend.cpu_pct = '12'))], ['body', 'samples', 0, 'trend', 'cpu_pct'], undefined],
    ['an unknown field that is not a number', [changed(good, (s) => (s.trend.note = 'hi'))], ['body', 'samples', 0, 'trend', 'note'], undefined],
    ['an unknown field of the pulse', [changed(good, (s) => (s.pulse.extra = 1))], ['body', 'samples', 0, 'pulse', 'extra'], 'extra_forbidden'],
    ['an unknown pulse status', [changed(good, (s) => (s.pulse.status = 'fine'))], ['body', 'samples', 0, 'pulse', 'status'], 'literal_error'],
    ['a missing part', [changed(good, (s) => delete s.disks)], ['body', 'samples', 0, 'disks'], 'missing'],
    ['an empty node', [changed(good, (s) => [s.trend, s.pulse, ...s.disks].forEach((p: Json) => (p.node = '')))], ['body', 'samples', 0, 'trend', 'node'], 'string_too_short'],
    ['no sample', [], ['body', 'samples'], 'too_short'],
    ['1001 samples', samplesOf('web-1', 1001, now), ['body', 'samples'], 'too_long'],
    ['samples that are not a list', { a: good }, ['body', 'samples'], 'list_type'],
  ];
  for (const [name, samples, loc, type] of cases) {
    await t.test(name, async () => {
      const r = await ingest(server, key, samples);
      assert.equal(r.status, 422, r.text);
      const issues = r.json.detail as Json[];
      assert.ok(
        issues.some((i) => JSON.stringify(i.loc) === JSON.stringify(loc) && (type === undefined || i.type === type)),
        `expected ${String(type)} at ${JSON.stringify(loc)}: ${JSON.stringify(issues).slice(0, 600)}`,
      );
    });
  }
  const notJson = await server.request('POST', '/ingest', { headers: { 'X-API-Key': key }, body: '{"samples": [' });
  assert.deepEqual([notJson.status, notJson.json.detail[0].type], [422, 'json_invalid']);
  assert.deepEqual(await nodeNames(server, key), [], 'nothing of a refused request was stored');
});

test('a ts 4 minutes ahead is taken, and every ts is stored in UTC with milliseconds', async (t) => {
  const dir = await tempDataDir(t);
  const key = (await createKey(dir, { userId: 'ops' })).key;
  const server = await startServer(t, dir);
  const ahead = new Date(Math.floor((Date.now() + 4 * MINUTE) / 1000) * 1000);
  // The same instant written with an offset of +02:00 and no fraction.
  const local = new Date(ahead.getTime() + 2 * 3_600_000).toISOString().replace(/\.\d{3}Z$/, '+02:00');
  const r = await ingest(server, key, [sampleOf('web-1', local)]);
  assert.deepEqual([r.status, r.json], [200, { stored: 1, duplicates: 0 }], r.text);
  const again = await ingest(server, key, [sampleOf('web-1', ahead)]);
  assert.deepEqual(again.json, { stored: 0, duplicates: 1 }, 'the same instant in UTC is the same sample');
  const latest = await server.get('/trends?node=web-1&limit=5', { 'X-API-Key': key });
  assert.deepEqual(latest.json.items.map((p: Json) => p.ts), [ahead.toISOString()]);
});

test('the body limit of /ingest is 8 MiB: 1000 samples of a node with many file systems are taken, a larger body is 413', async (t) => {
  const dir = await tempDataDir(t);
  const key = (await createKey(dir, { userId: 'ops' })).key;
  const server = await startServer(t, dir);
  const mounts = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`/srv/volume-${i}`, [40 + i, 60] as [number, number]]));
  const batch = samplesOf('big-1', 1000, new Date(Date.now() - MINUTE), { disks: mounts });
  const size = JSON.stringify({ samples: batch }).length;
  assert.ok(size > 2 * 1024 * 1024, `the batch is over 2 MiB (${size} bytes), twice the default limit`);
  const taken = await ingest(server, key, batch);
  assert.deepEqual([taken.status, taken.json], [200, { stored: 1000, duplicates: 0 }], taken.text.slice(0, 300));

  const tooBig = JSON.stringify({ samples: [sampleOf('big-2', new Date())], padding: 'x'.repeat(8 * 1024 * 1024) });
  const refused = await server.request('POST', '/ingest', { headers: { 'X-API-Key': key }, body: tooBig });
  assert.equal(refused.status, 413, refused.text.slice(0, 300));
  assert.match(refused.json.detail, /larger than 8388608 bytes/);
  assert.deepEqual(await nodeNames(server, key), ['big-1']);
  const workRefused = await server.request('POST', '/work/complete', { headers: { 'X-API-Key': key }, body: { title: 'x'.repeat(2 * 1024 * 1024) } });
  assert.equal(workRefused.status, 413, 'other routes keep the 1 MiB limit');
});

test('an ingest key for node A sends only A\'s samples: B\'s, or a batch with one of B\'s, is 403 and nothing is stored; a write key sends any node\'s', async (t) => {
  const dir = await tempDataDir(t);
  const forA = (await createKey(dir, { userId: 'node-a', scopes: ['ingest'], node: 'node-a' })).key;
  const anyNode = (await createKey(dir, { userId: 'relay', scopes: ['ingest'] })).key;
  const write = (await createKey(dir, { userId: 'ops', scopes: ['write'] })).key;
  const read = (await createKey(dir, { userId: 'viewer', scopes: ['read'] })).key;
  const server = await startServer(t, dir);
  const at = new Date(Date.now() - MINUTE);

  const own = await ingest(server, forA, [sampleOf('node-a', at)]);
  assert.deepEqual([own.status, own.json], [200, { stored: 1, duplicates: 0 }], own.text);
  for (const [name, samples] of [
    ['another node', [sampleOf('node-b', at)]],
    ['a batch with one sample of another node', [sampleOf('node-a', new Date(at.getTime() + 1000)), sampleOf('node-b', at)]],
  ] as const) {
    const r = await ingest(server, forA, samples);
    assert.equal(r.status, 403, `${name}: ${r.text}`);
    assert.match(r.json.detail, /scope is the samples of node "node-a" only; sample \d is of node "node-b": nothing was stored/);
  }
  for (const route of ['/nodes', '/trends', '/events']) assert.equal((await server.get(route, { 'X-API-Key': forA })).status, 403, `an ingest key cannot read ${route}`);
  assert.equal((await ingest(server, read, [sampleOf('node-c', at)])).status, 403, 'a read key cannot ingest');
  assert.deepEqual((await ingest(server, write, [sampleOf('node-c', at)])).json, { stored: 1, duplicates: 0 }, 'a write key ingests any node');
  assert.deepEqual((await ingest(server, anyNode, [sampleOf('node-d', at)])).json, { stored: 1, duplicates: 0 }, 'an ingest key without a node ingests any node');
  assert.deepEqual(await nodeNames(server, read), ['node-a', 'node-c', 'node-d'], 'nothing of node-b was stored');
  const a = await server.get('/trends?node=node-a', { 'X-API-Key': read });
  assert.deepEqual(a.json.items.map((p: Json) => p.ts), [at.toISOString()], 'only the first sample of node-a: the refused batch stored nothing');
});

test('a batch sent again is counted as duplicates and stored once, also when both arrive at once', async (t) => {
  const dir = await tempDataDir(t);
  const key = (await createKey(dir, { userId: 'node-a', scopes: ['ingest'], node: 'node-a' })).key;
  const server = await startServer(t, dir);
  const batch = samplesOf('node-a', 20, new Date(Date.now() - 10 * MINUTE));
  assert.deepEqual((await ingest(server, key, batch.slice(0, 10))).json, { stored: 10, duplicates: 0 });
  assert.deepEqual((await ingest(server, key, batch.slice(0, 10))).json, { stored: 0, duplicates: 10 }, 'the same batch again');
  assert.deepEqual((await ingest(server, key, batch.slice(5, 15))).json, { stored: 5, duplicates: 5 }, 'a batch that overlaps');

  const rest = batch.slice(15);
  const both = await Promise.all([ingest(server, key, rest), ingest(server, key, rest)]);
  assert.deepEqual(both.map((r) => r.status), [200, 200]);
  const stored = both.reduce((n, r) => n + r.json.stored, 0);
  const duplicates = both.reduce((n, r) => n + r.json.duplicates, 0);
  assert.deepEqual([stored, duplicates], [rest.length, rest.length], `the same batch twice at once: each sample stored once (${JSON.stringify(both.map((r) => r.json))})`);

  const read = (await createKey(dir, { userId: 'ops', scopes: ['read'] })).key;
  for (const [series, route] of [['trends', '/trends'], ['disk', '/disk'], ['pulse', '/health/pulse']] as const) {
    const page = await server.get(`${route}?node=node-a&limit=100`, { 'X-API-Key': read });
    assert.equal(page.status, 200, page.text);
    assert.deepEqual(
      page.json.items.map((r: Json) => r.ts),
      batch.map((s) => s.trend.ts).reverse(),
      `${series}: each of the 20 samples once, newest first`,
    );
  }
});
