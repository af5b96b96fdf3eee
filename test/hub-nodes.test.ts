import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { createKey } from '../src/core/keys/key-store.ts';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { sampleOf } from './helpers/samples.ts';
import { startServer, type TestServer } from './helpers/server.ts';

// The hub's reads of what its nodes sent (DESIGN.md 7a): GET /nodes and
// `estate nodes`, per-node series reads, and node_stale events, through the
// real server on 127.0.0.1:0 and the real CLI.

type Json = Record<string, any>;

const MINUTE = 60_000;

async function ingest(server: TestServer, key: string, samples: unknown) {
  const r = await server.request('POST', '/ingest', { headers: { 'X-API-Key': key }, body: { samples } });
  assert.equal(r.status, 200, r.text);
  return r.json;
}

test('GET /nodes and estate nodes: every node from the heartbeat, the hub\'s own collector and ingest, with its latest figures; stale ones marked', async (t) => {
  const dir = await tempDataDir(t);
  // A node only the heartbeat knows (written by another tool), silent for an hour.
  const hourAgo = new Date(Date.now() - 60 * MINUTE).toISOString();
  await mkdir(path.join(dir, 'state'), { recursive: true });
  await writeFile(path.join(dir, 'state', 'heartbeat.json'), JSON.stringify({ nodes: [{ name: 'legacy', last_seen: hourAgo, status: 'degraded' }] }));
  const collected = await runEstate(['collect', '--once', '--node', 'hub-self', '--data-dir', dir]);
  assert.equal(collected.code, 0, collected.stderr);

  const read = (await createKey(dir, { userId: 'viewer', scopes: ['read'] })).key;
  const forA = (await createKey(dir, { userId: 'node-a', scopes: ['ingest'], node: 'node-a' })).key;
  const write = (await createKey(dir, { userId: 'ops', scopes: ['write'] })).key;
  const server = await startServer(t, dir);
  const now = Date.now();
  const newest = new Date(now - MINUTE);
  await ingest(server, forA, [
    sampleOf('node-a', new Date(now - 2 * MINUTE), { cpu_pct: 5, mem_used_pct: 20, load1: 0.1, disks: { '/': [99, 1] } }),
    sampleOf('node-a', newest, { cpu_pct: 55.5, mem_used_pct: 61.2, load1: 1.5, status: 'degraded', disks: { '/': [30, 70], '/data': [90, 10], '/empty': [0, 0] } }),
  ]);
  const silentAt = new Date(now - 20 * MINUTE);
  await ingest(server, write, [sampleOf('node-old', silentAt, { cpu_pct: 1 })]);

  const nodes = await server.get('/nodes', { 'X-API-Key': read });
  assert.equal(nodes.status, 200, nodes.text);
  assert.deepEqual(nodes.json.items.map((n: Json) => n.name), ['hub-self', 'legacy', 'node-a', 'node-old'], 'sorted by name');
  assert.equal(nodes.json.count, 4);
  assert.equal(nodes.json.stale_after_s, 900);
  const byName = Object.fromEntries(nodes.json.items.map((n: Json) => [n.name, n]));
  assert.deepEqual(byName['node-a'], {
    name: 'node-a',
    last_seen: newest.toISOString(),
    stale: false,
    status: 'degraded',
    cpu_pct: 55.5,
    mem_used_pct: 61.2,
    load1: 1.5,
    disk_used_pct: 90,
  });
  assert.deepEqual(
    [byName['node-old'].last_seen, byName['node-old'].stale, byName['node-old'].cpu_pct],
    [silentAt.toISOString(), true, 1],
    'silent for 20 minutes, past stale_after_s (900)',
  );
  assert.deepEqual(byName.legacy, { name: 'legacy', last_seen: hourAgo, stale: true, status: 'degraded', cpu_pct: null, mem_used_pct: null, load1: null, disk_used_pct: null });
  const self = byName['hub-self'];
  assert.equal(self.stale, false);
  assert.equal(typeof self.mem_used_pct, 'number', 'the hub\'s own collector is a node like the others');
  assert.ok(self.disk_used_pct > 0 && self.disk_used_pct <= 100, String(self.disk_used_pct));

  // The CLI: the same answer remotely and locally (--json is the HTTP body), a table of the chosen columns piped.
  const remote = await runEstate(['nodes', '--url', server.url, '--api-key', read, '--json']);
  assert.equal(remote.code, 0, remote.stderr);
  const local = await runEstate(['nodes', '--data-dir', dir, '--json']);
  assert.equal(local.code, 0, local.stderr);
  const steady = (body: Json) => body.items.map((n: Json) => ({ ...n, stale: n.name === 'hub-self' ? undefined : n.stale }));
  assert.deepEqual(steady(remote.json), steady(nodes.json));
  assert.deepEqual(steady(local.json), steady(nodes.json));
  const piped = await runEstate(['nodes', '--data-dir', dir]);
  assert.equal(piped.code, 0, piped.stderr);
  const [header, ...rows] = piped.stdout.trim().split('\n');
  assert.deepEqual(header?.split('\t'), ['name', 'status', 'cpu_pct', 'mem_used_pct', 'disk_used_pct', 'load1', 'last_seen', 'stale']);
  assert.deepEqual(rows.find((r) => r.startsWith('node-a\t'))?.split('\t'), ['node-a', 'degraded', '55.5', '61.2', '90', '1.5', newest.toISOString(), 'false']);
  const refused = await runEstate(['nodes', '--url', server.url, '--api-key', forA]);
  assert.equal(refused.code, 4, 'an ingest key cannot read /nodes');

  // Per-node reads: only that node's records; without ?node= every node's, newest first.
  const a = await server.get('/trends?node=node-a', { 'X-API-Key': read });
  assert.deepEqual(a.json.items.map((p: Json) => [p.node, p.cpu_pct]), [['node-a', 55.5], ['node-a', 5]]);
  const disks = await server.get('/disk?node=node-a&limit=10', { 'X-API-Key': read });
  assert.deepEqual(disks.json.items.map((d: Json) => d.mount).sort(), ['/', '/', '/data', '/empty']);
  const all = await server.get('/trends', { 'X-API-Key': read });
  assert.deepEqual(new Set(all.json.items.map((p: Json) => p.node)), new Set(['hub-self', 'node-a', 'node-old']));
  const cli = await runEstate(['trends', '--node', 'node-old', '--url', server.url, '--api-key', read, '--json']);
  assert.equal(cli.code, 0, cli.stderr);
  assert.deepEqual(cli.json.items.map((p: Json) => p.node), ['node-old']);

  // Events: the silent nodes are stale, the others are not.
  const events = await server.get('/events?limit=100', { 'X-API-Key': read });
  const stale = events.json.items.filter((e: Json) => e.kind === 'node_stale').map((e: Json) => e.subject).sort();
  assert.deepEqual(stale, ['legacy', 'node-old']);
  const old = events.json.items.find((e: Json) => e.kind === 'node_stale' && e.subject === 'node-old');
  assert.equal(old.ts, new Date(silentAt.getTime() + 900_000).toISOString(), 'stale from stale_after_s after its last sample');
});

test('a node that stops sending becomes stale in /nodes and yields node_stale in /events once stale_after_s has passed, and node_recovered when it sends again', async (t) => {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ events: { stale_after_s: 120 } }));
  const key = (await createKey(dir, { userId: 'ops' })).key;
  let offsetMs = 0;
  const server = await startServer(t, dir, { now: () => new Date(Date.now() + offsetMs) });
  const sentAt = new Date(Date.now() - 1000);
  await ingest(server, key, [sampleOf('web-1', sentAt)]);
  const staleEvents = async () => (await server.get('/events', { 'X-API-Key': key })).json.items.filter((e: Json) => e.kind === 'node_stale');
  const isStale = async () => (await server.get('/nodes', { 'X-API-Key': key })).json.items[0].stale;
  assert.deepEqual(await staleEvents(), [], 'a node that just sent is not stale');
  assert.equal(await isStale(), false);
  const heartbeat = (await server.get('/events', { 'X-API-Key': key })).json.items.find((e: Json) => e.kind === 'heartbeat' && e.subject === 'web-1');
  assert.equal(heartbeat?.ts, sentAt.toISOString(), 'ingest keeps the heartbeat current');

  // The hub's clock moves on three minutes, past stale_after_s (120 s), with no sample from web-1.
  offsetMs = 3 * MINUTE;
  const events = await staleEvents();
  assert.deepEqual(events.map((e: Json) => [e.subject, e.ts]), [['web-1', new Date(sentAt.getTime() + 120_000).toISOString()]]);
  assert.match(events[0].message, /web-1 has not been seen for 3m/);
  assert.equal(await isStale(), true);

  // It sends again: no longer stale; the spell stays in /events, a node_stale then its node_recovered (DESIGN.md 7c).
  const backAt = new Date(Date.now() + offsetMs - 1000);
  await ingest(server, key, [sampleOf('web-1', backAt)]);
  const spell = (await server.get('/events', { 'X-API-Key': key })).json.items.filter((e: Json) => e.kind === 'node_stale' || e.kind === 'node_recovered');
  assert.deepEqual(
    spell.map((e: Json) => [e.kind, e.subject, e.ts]),
    [
      ['node_recovered', 'web-1', backAt.toISOString()],
      ['node_stale', 'web-1', new Date(sentAt.getTime() + 120_000).toISOString()],
    ],
  );
  assert.equal(await isStale(), false);
});

test('disk_used_pct is the fullest file system of the newest sample, also for a node with more file systems than the first read holds', async (t) => {
  const dir = await tempDataDir(t);
  const key = (await createKey(dir, { userId: 'ops' })).key;
  const server = await startServer(t, dir);
  const at = Date.now() - 5 * MINUTE;
  // 40 file systems; the fullest is the first of the sample, the farthest from the newest end of the log.
  const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`/mnt/v${i}`, [i === 0 ? 95 : 10, i === 0 ? 5 : 90] as [number, number]]));
  await ingest(server, key, [sampleOf('wide', new Date(at - 1000), { disks: { '/': [99, 1] } }), sampleOf('wide', new Date(at), { disks: many })]);
  await ingest(server, key, [sampleOf('narrow', new Date(at), { disks: { '/': [50, 50], '/var': [75, 25] } })]);
  const nodes = (await server.get('/nodes', { 'X-API-Key': key })).json.items;
  assert.deepEqual(nodes.map((n: Json) => [n.name, n.disk_used_pct]), [['narrow', 75], ['wide', 95]], 'the older sample\'s 99 % is not counted');
});

test('a heartbeat that is not JSON: /nodes still lists the nodes the series know, and says why the heartbeat was left out', async (t) => {
  const dir = await tempDataDir(t);
  const key = (await createKey(dir, { userId: 'ops' })).key;
  const server = await startServer(t, dir);
  const at = new Date(Date.now() - MINUTE);
  await ingest(server, key, [sampleOf('web-1', at, { cpu_pct: 7 })]);
  await writeFile(path.join(dir, 'state', 'heartbeat.json'), '{"nodes": [');
  const r = await server.get('/nodes', { 'X-API-Key': key });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json.items.map((n: Json) => [n.name, n.last_seen, n.stale, n.cpu_pct]), [['web-1', at.toISOString(), false, 7]], 'last_seen from its newest trend point');
  assert.equal(r.json.errors.length, 1);
  assert.match(r.json.errors[0], /heartbeat/);
});
