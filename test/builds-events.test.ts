import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';

const NOW = new Date('2026-11-22T12:00:00Z');
const ago = (hours: number) => new Date(NOW.getTime() - hours * 3_600_000).toISOString();

test('GET /builds digests the window by status and project; /builds/recent is 7 days', async (t) => {
  const dir = await tempDataDir(t);
  const builds = [
    { ts: ago(24 * 20), project: 'old', status: 'failure' },
    { ts: ago(24 * 6), project: 'estate', status: 'success', duration_s: 100 },
    { ts: ago(24 * 3), project: 'estate', status: 'failure', duration_s: 200 },
    { ts: ago(30), project: 'garden', status: 'cancelled' },
    { ts: ago(2), project: 'estate', status: 'success', duration_s: 300 },
    { ts: ago(1), project: 'garden', status: 'success' },
  ];
  await writeFile(path.join(dir, 'builds.jsonl'), builds.map((b) => JSON.stringify(b)).join('\n') + '\nnot json\n');
  const key = await newKey(dir);
  const server = await startServer(t, dir, { now: () => NOW });
  const week = await server.get('/builds', { 'X-API-Key': key });
  assert.equal(week.status, 200);
  assert.equal(week.json.days, 7);
  assert.equal(week.json.until, NOW.toISOString());
  assert.deepEqual(
    { total: week.json.total, success: week.json.success, failure: week.json.failure, cancelled: week.json.cancelled, rate: week.json.success_rate },
    { total: 5, success: 3, failure: 1, cancelled: 1, rate: 0.75 },
  );
  assert.equal(week.json.skipped_lines, 1);
  const estate = week.json.by_project[0];
  assert.deepEqual(estate, {
    project: 'estate', total: 3, success: 2, failure: 1, cancelled: 0, success_rate: 0.667, last_status: 'success', last_ts: ago(2), avg_duration_s: 200,
  });
  assert.equal(week.json.by_project[1].avg_duration_s, null);
  assert.deepEqual(week.json.recent_failures, [{ ts: ago(24 * 3), project: 'estate', duration_s: 200 }], 'the window\'s failures, not the one before it');
  const recent = await server.get('/builds/recent', { 'X-API-Key': key });
  assert.deepEqual(recent.json, week.json);
  const month = await server.get('/builds?days=30', { 'X-API-Key': key });
  assert.equal(month.json.total, 6);
  const day = await server.get('/builds?days=1', { 'X-API-Key': key });
  assert.equal(day.json.total, 2);
  for (const bad of ['0', '366', 'week']) {
    const r = await server.get(`/builds?days=${bad}`, { 'X-API-Key': key });
    assert.equal(r.status, 422, bad);
    assert.deepEqual(r.json.detail[0].loc, ['query', 'days']);
  }
  const none = await startServer(t, await tempDataDir(t), { now: () => NOW });
  const empty = await none.get('/builds', { 'X-API-Key': await newKey(none.ctx.dataDir) });
  assert.equal(empty.json.total, 0);
  assert.equal(empty.json.success_rate, null);
});

test('GET /events derives beats, stale nodes and scores, newest first', async (t) => {
  const dir = await tempDataDir(t);
  await mkdir(path.join(dir, 'state'), { recursive: true });
  await writeFile(
    path.join(dir, 'state', 'heartbeat.json'),
    JSON.stringify({
      nodes: [
        { name: 'hub', last_seen: ago(0.01), status: 'up' },
        { name: 'edge', last_seen: ago(3), status: 'down' },
        { status: 'nameless' },
      ],
    }),
  );
  await writeFile(path.join(dir, 'state', 'scoreboard.json'), JSON.stringify({ entries: { scribe: { score: 7, ts: ago(0.5), delta: 2 }, ferry: 3 } }));
  const key = await newKey(dir);
  const server = await startServer(t, dir, { now: () => NOW });
  const r = await server.get('/events', { 'X-API-Key': key });
  assert.equal(r.status, 200);
  assert.deepEqual(
    r.json.items.map((e: { kind: string; subject: string }) => `${e.kind}:${e.subject}`),
    ['heartbeat:hub', 'score:scribe', 'node_stale:edge', 'heartbeat:edge'],
  );
  assert.equal(r.json.items[1].message, 'scribe scored 7 (+2)');
  assert.match(r.json.items[2].message, /edge has not been seen for 3h 0m/);
  assert.equal(r.json.items[2].ts, new Date(Date.parse(ago(3)) + 900_000).toISOString());
  assert.equal(r.json.skipped_entries, 2, 'the nameless node and the score without a time');
  for (const e of r.json.items) assert.deepEqual(Object.keys(e).sort(), ['kind', 'message', 'source', 'subject', 'ts']);
  const one = await server.get('/events?limit=1', { 'X-API-Key': key });
  assert.equal(one.json.items.length, 1);
  assert.equal((await server.get('/events?limit=1001', { 'X-API-Key': key })).status, 422);
});

test('GET /events with missing or corrupt state files answers 200 and says why', async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir);
  const server = await startServer(t, dir, { now: () => NOW });
  const empty = await server.get('/events', { 'X-API-Key': key });
  assert.deepEqual(empty.json.items, []);
  assert.deepEqual(empty.json.errors, []);
  await writeFile(path.join(dir, 'state', 'heartbeat.json'), '{"nodes": [');
  await writeFile(path.join(dir, 'state', 'scoreboard.json'), '"just a string"');
  const broken = await server.get('/events', { 'X-API-Key': key });
  assert.equal(broken.status, 200);
  assert.equal(broken.json.errors.length, 2);
});
