import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { VERSION } from '../src/version.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';

const lines = (records: object[]) => records.map((r) => JSON.stringify(r)).join('\n') + '\n';

test('GET /disk and /disk/latest, with and without a mount filter', async (t) => {
  const dir = await tempDataDir(t);
  const snaps = [];
  for (let h = 0; h < 5; h++) {
    for (const mount of ['/', '/srv']) snaps.push({ ts: `2026-11-21T0${h}:00:00Z`, mount, total_bytes: 100, used_bytes: 10 + h, free_bytes: 90 - h });
  }
  await writeFile(path.join(dir, 'disk.jsonl'), lines(snaps));
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const h = { 'X-API-Key': key };
  const all = await server.get('/disk?limit=3', h);
  assert.deepEqual(all.json.items.map((s: { mount: string }) => s.mount), ['/srv', '/', '/srv']);
  const root = await server.get('/disk?mount=%2F', h);
  assert.equal(root.json.count, 5);
  assert.ok(root.json.items.every((s: { mount: string }) => s.mount === '/'));
  assert.equal((await server.get('/disk/latest', h)).json.mount, '/srv');
  const latestRoot = await server.get('/disk/latest?mount=/', h);
  assert.deepEqual(latestRoot.json, snaps[8]);
  const none = await server.get('/disk/latest?mount=/nope', h);
  assert.equal(none.status, 404);
  assert.match(none.json.detail, /\/nope/);
});

test('GET /health/pulse and /health/pulse/status', async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const h = { 'X-API-Key': key };
  const unknown = await server.get('/health/pulse/status', h);
  assert.equal(unknown.status, 200);
  assert.equal(unknown.json, 'unknown');
  const cases: [object[], string][] = [
    [[{ ts: '2026-11-21T00:00:00Z', status: 'healthy' }], 'healthy'],
    [[{ ts: '2026-11-21T00:00:00Z', status: 'healthy' }, { ts: '2026-11-21T00:15:00Z', status: 'degraded', checks: { disk: 'low' } }], 'degraded'],
    [[{ ts: '2026-11-21T00:00:00Z', status: 'unhealthy' }], 'unhealthy'],
    [[{ ts: '2026-11-21T00:00:00Z', status: 'on fire' }], 'unknown'],
  ];
  for (const [entries, expected] of cases) {
    await writeFile(path.join(dir, 'health-pulse.jsonl'), lines(entries));
    const r = await server.get('/health/pulse/status', h);
    assert.equal(r.text, JSON.stringify(expected));
    const list = await server.get('/health/pulse', h);
    assert.deepEqual(list.json.items, [...entries].reverse());
  }
});

test('GET /health reports status, version, uptime and disk usage; / and /healthz answer', async (t) => {
  const dir = await tempDataDir(t);
  const server = await startServer(t, dir);
  const r = await server.get('/health');
  assert.equal(r.status, 200);
  assert.equal(r.json.version, VERSION);
  assert.equal(r.json.pulse, 'unknown');
  assert.ok(r.json.uptime_s >= 0);
  assert.ok(r.json.disk.total_bytes > 0);
  assert.ok(r.json.disk.free_bytes <= r.json.disk.total_bytes);
  assert.equal(r.json.disk.path, undefined, 'a public route does not say where the data dir is');
  assert.ok(!r.text.includes(dir));
  await writeFile(path.join(dir, 'health-pulse.jsonl'), lines([{ ts: '2026-11-21T00:00:00Z', status: 'unhealthy' }]));
  const bad = await server.get('/health');
  assert.equal(bad.json.status, 'degraded');
  assert.deepEqual((await server.get('/healthz')).json, { status: 'ok' });
  const root = await server.get('/');
  assert.equal(root.json.name, 'estate');
  assert.equal(root.json.openapi, '/api/openapi.json');
});
