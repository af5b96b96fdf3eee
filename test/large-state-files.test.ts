import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { MAX_PARSED_STATE_BYTES } from '../src/core/state-files.ts';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';

const MiB = 1024 * 1024;

/** A valid JSON state file of about `bytes` bytes (ASCII), its nodes first. */
function bigState(bytes: number): string {
  const head = '{"nodes":[{"name":"hub","last_seen":"2026-11-21T10:00:00Z"}],"pad":"';
  return `${head}${'x'.repeat(bytes - head.length - 2)}"}`;
}

async function stateDir(t: Parameters<typeof tempDataDir>[0], files: Record<string, string | Buffer>): Promise<string> {
  const dir = await tempDataDir(t);
  await mkdir(path.join(dir, 'state'), { recursive: true });
  for (const [name, content] of Object.entries(files)) await writeFile(path.join(dir, 'state', `${name}.json`), content);
  return dir;
}

test('a 20 MiB state file: /state/{name}?max_chars=100 answers its first 100 characters and its size', async (t) => {
  const text = bigState(20 * MiB);
  const dir = await stateDir(t, { heartbeat: text });
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const r = await server.get('/state/heartbeat?max_chars=100', { 'X-API-Key': key });
  assert.equal(r.status, 200);
  assert.equal(r.json.content, text.slice(0, 100));
  assert.equal(r.json.truncated, true);
  assert.equal(r.json.size_chars, text.length);
  assert.equal(r.json.max_chars, 100);
  // Asked again (the size is remembered for an unchanged file), and with the largest max_chars.
  const again = await server.get('/state/heartbeat?max_chars=100', { 'X-API-Key': key });
  assert.deepEqual(again.json, r.json);
  const most = await server.get('/state/heartbeat?max_chars=1000000', { 'X-API-Key': key });
  assert.equal(most.status, 200);
  assert.equal(most.json.content, text.slice(0, 1_000_000));
  assert.equal(most.json.size_chars, text.length);
});

test('a 20 MiB state file: the CLI prints its first 100 characters', async (t) => {
  const text = bigState(20 * MiB);
  const dir = await stateDir(t, { scoreboard: text });
  const r = await runEstate(['state', 'scoreboard', '--max-chars', '100', '--json', '--data-dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.json.content, text.slice(0, 100));
  assert.equal(r.json.size_chars, text.length);
  assert.equal(r.json.truncated, true);
  const table = await runEstate(['state', 'scoreboard', '--max-chars', '100', '--data-dir', dir]);
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /truncated/);
});

test('a state file too large to parse is described in /state and /events, not loaded; smaller ones still parse', async (t) => {
  const dir = await stateDir(t, {
    heartbeat: bigState(20 * MiB),
    scoreboard: bigState(MAX_PARSED_STATE_BYTES + 1),
    estate_map: bigState(MAX_PARSED_STATE_BYTES),
  });
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const all = await server.get('/state', { 'X-API-Key': key });
  assert.equal(all.status, 200);
  const [heartbeat, scoreboard, map] = all.json.items;
  for (const item of [heartbeat, scoreboard]) {
    assert.equal(item.exists, true);
    assert.equal(item.data, null);
    assert.match(item.error, /too large to parse/);
    assert.equal(item.error.includes(dir), false);
  }
  assert.equal(map.error, null);
  assert.equal(map.data.nodes[0].name, 'hub');
  const events = await server.get('/events', { 'X-API-Key': key });
  assert.equal(events.status, 200);
  assert.equal(events.json.errors.length, 2);
});

test('max_chars cuts a large file between characters: multi-byte and astral characters are never split', async (t) => {
  // 1-, 2-, 3- and 4-byte characters (the last a surrogate pair in UTF-16): 17 MB, past any read size.
  const unit = 'aé✓🙂';
  const text = `"${unit.repeat(1_700_000)}"`;
  const dir = await stateDir(t, { estate_map: text });
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const size = 2 + 4 * 1_700_000;
  for (const max of [1, 2, 3, 4, 5, 6, 7, 8, 9, 99, 5000, 1_000_000]) {
    const r = await server.get(`/state/estate_map?max_chars=${max}`, { 'X-API-Key': key });
    assert.equal(r.status, 200);
    assert.equal(r.json.content, [...`"${unit.repeat(Math.ceil(max / 4))}`].slice(0, max).join(''), `max_chars=${max}`);
    assert.equal(r.json.size_chars, size);
    assert.equal(r.json.truncated, true);
  }
});
