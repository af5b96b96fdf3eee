import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';

// A state entry whose time is out of range (nanoseconds such as 9e15, a year
// past 9999 or before 0000) is skipped and counted in `skipped_entries`, as
// an entry without a time is: /events stays 200 and the CLI prints the rest.

const NOW = new Date('2026-11-21T12:00:00Z');

async function setup(t: Parameters<typeof tempDataDir>[0]) {
  const dir = await tempDataDir(t);
  await mkdir(path.join(dir, 'state'), { recursive: true });
  const heartbeat = {
    nodes: [
      { name: 'nanos', last_seen: 9e15, status: 'up' },
      { name: 'negative-nanos', last_seen: -9e15, status: 'up' },
      { name: 'far-future', last_seen: '+275760-09-13T00:00:00.000Z', status: 'up' },
      { name: 'year-10000', last_seen: '+010000-01-01T00:00:00.000Z', status: 'up' },
      { name: 'hub', last_seen: '2026-11-21T11:59:00Z', status: 'up' },
    ],
  };
  const scoreboard = {
    entries: [
      { name: 'scribe', score: 3, ts: '2026-11-21T11:00:00Z' },
      { name: 'overflow', score: 1, ts: 8.64e15 + 1 },
    ],
  };
  await writeFile(path.join(dir, 'state', 'heartbeat.json'), JSON.stringify(heartbeat));
  await writeFile(path.join(dir, 'state', 'scoreboard.json'), JSON.stringify(scoreboard));
  return { dir, key: await newKey(dir) };
}

test('GET /events skips and counts entries whose time is out of range', async (t) => {
  const { dir, key } = await setup(t);
  const server = await startServer(t, dir, { now: () => NOW });
  const r = await server.get('/events', { 'X-API-Key': key });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.skipped_entries, 5);
  assert.deepEqual(r.json.errors, []);
  assert.deepEqual(
    r.json.items.map((e: { kind: string; subject: string; ts: string }) => [e.kind, e.subject, e.ts]),
    [
      ['heartbeat', 'hub', '2026-11-21T11:59:00.000Z'],
      ['score', 'scribe', '2026-11-21T11:00:00.000Z'],
    ],
  );
});

test('`estate events` prints the good rows and no time error', async (t) => {
  const { dir } = await setup(t);
  const table = await runEstate(['events', '--data-dir', dir]);
  assert.equal(table.code, 0, table.stderr);
  assert.equal(table.stderr, '');
  assert.match(table.stdout, /hub reported up/);
  assert.match(table.stdout, /scribe scored 3/);
  assert.doesNotMatch(table.stdout, /nanos|far-future|year-10000|overflow|Invalid time value/);
  const json = await runEstate(['events', '--json', '--data-dir', dir]);
  assert.equal(json.code, 0, json.stderr);
  assert.equal(json.json.skipped_entries, 5);
});
