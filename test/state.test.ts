import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';

const SECRET = 'TOP-SECRET-CONTENT';

async function stateDir(t: Parameters<typeof tempDataDir>[0]) {
  const dir = await tempDataDir(t);
  await mkdir(path.join(dir, 'state'), { recursive: true });
  await writeFile(path.join(dir, 'state', 'scoreboard.json'), JSON.stringify({ entries: [{ name: 'scribe', score: 3, ts: '2026-11-21T10:00:00Z' }] }));
  await writeFile(path.join(dir, 'state', 'heartbeat.json'), '{"nodes": [ {"name": "hub", "last_seen": "2026-11-21T10:00:00Z"} ], "note": "ünïcode ✓"}');
  await writeFile(path.join(dir, 'state', 'secret.json'), JSON.stringify({ SECRET }));
  await writeFile(path.join(dir, 'passwd'), SECRET);
  await writeFile(path.join(dir, 'state', 'estate_map.json'), '{ not json');
  return dir;
}

test('GET /state/{file_name} returns the text, cut at max_chars characters', async (t) => {
  const dir = await stateDir(t);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const full = await server.get('/state/heartbeat', { 'X-API-Key': key });
  assert.equal(full.status, 200);
  assert.equal(full.json.truncated, false);
  assert.equal(full.json.max_chars, 5000);
  assert.deepEqual(JSON.parse(full.json.content).nodes[0].name, 'hub');
  const cut = await server.get('/state/heartbeat?max_chars=80', { 'X-API-Key': key });
  assert.equal(cut.json.truncated, true);
  assert.equal([...cut.json.content].length, 80);
  assert.equal(cut.json.size_chars, full.json.size_chars);
  const chars = [...full.json.content].length;
  const exact = await server.get(`/state/heartbeat?max_chars=${chars}`, { 'X-API-Key': key });
  assert.equal(exact.json.truncated, false);
  for (const bad of ['0', '1000001', 'x']) {
    const r = await server.get(`/state/heartbeat?max_chars=${bad}`, { 'X-API-Key': key });
    assert.equal(r.status, 422, bad);
    assert.deepEqual(r.json.detail[0].loc, ['query', 'max_chars']);
  }
});

test('GET /state lists the three files, describing missing and corrupt ones', async (t) => {
  const dir = await stateDir(t);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const r = await server.get('/state', { 'X-API-Key': key });
  assert.equal(r.status, 200);
  assert.deepEqual(r.json.items.map((i: { name: string }) => i.name), ['scoreboard', 'heartbeat', 'estate_map']);
  const map = r.json.items[2];
  assert.equal(map.exists, true);
  assert.equal(map.data, null);
  assert.match(map.error, /not valid JSON/);
  assert.equal(JSON.stringify(r.json).includes(SECRET), false);
});

test('an unknown state name is 422 and traversal attempts never return file content', async (t) => {
  const dir = await stateDir(t);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const unknown = await server.get('/state/secret', { 'X-API-Key': key });
  assert.equal(unknown.status, 422);
  assert.deepEqual(unknown.json.detail[0].loc, ['path', 'file_name']);
  assert.equal(unknown.json.detail[0].type, 'literal_error');
  const attempts = [
    '/state/..%2Fpasswd',
    '/state/..%2f..%2fpasswd',
    '/state/%2e%2e%2Fpasswd',
    '/state/../passwd',
    '/state/scoreboard%00.json',
    '/state/scoreboard%2F..%2F..%2Fpasswd',
    '/state/%2Fetc%2Fpasswd',
    '/state/secret.json',
    '/state/SCOREBOARD',
    '/state//etc/passwd',
  ];
  for (const route of attempts) {
    const r = await server.get(route, { 'X-API-Key': key });
    assert.ok([404, 422].includes(r.status), `${route}: ${r.status}`);
    assert.equal(r.text.includes(SECRET), false, route);
    assert.equal(r.text.includes('root:'), false, route);
  }
});

test('a missing state file is 404; the CLI exits 3 for it and 2 for an unknown name', async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const r = await server.get('/state/scoreboard', { 'X-API-Key': key });
  assert.equal(r.status, 404);
  assert.match(r.json.detail, /scoreboard/);
  const missing = await runEstate(['state', 'scoreboard', '--data-dir', dir]);
  assert.equal(missing.code, 3);
  assert.equal(missing.stderr.trim().split('\n').length, 1);
  const unknown = await runEstate(['state', '../passwd', '--data-dir', dir]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /^estate: invalid <file_name>: Input should be 'scoreboard', 'heartbeat' or 'estate_map'/);
});
