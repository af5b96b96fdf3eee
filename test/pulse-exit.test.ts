import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';

// `estate pulse status` exits with the Nagios plugin codes, so it drops into
// cron and Nagios-style checks: 0 healthy, 1 degraded, 2 unhealthy, 3 unknown.

/** A pulse log whose newest entry has `status` (none at all when undefined), after an older healthy one. */
async function pulseDir(t: Parameters<typeof tempDataDir>[0], status: string | undefined): Promise<string> {
  const dir = await tempDataDir(t);
  const entries = status === undefined ? [] : [{ ts: '2026-01-01T00:00:00Z', status: 'healthy' }, { ts: '2026-01-01T00:05:00Z', status, checks: {} }];
  await writeFile(path.join(dir, 'health-pulse.jsonl'), entries.map((e) => `${JSON.stringify(e)}\n`).join(''));
  return dir;
}

const CASES: [newest: string | undefined, answer: string, exit: number][] = [
  ['healthy', 'healthy', 0],
  ['degraded', 'degraded', 1],
  ['unhealthy', 'unhealthy', 2],
  [undefined, 'unknown', 3],
  ['on fire', 'unknown', 3],
];

for (const [newest, answer, exit] of CASES) {
  test(`pulse status, newest entry ${newest ?? '(none)'}: prints ${answer}, exits ${exit}, with or without --json`, async (t) => {
    const dir = await pulseDir(t, newest);
    const text = await runEstate(['pulse', 'status', '--data-dir', dir]);
    assert.deepEqual([text.code, text.stdout.trim(), text.stderr], [exit, answer, '']);
    const json = await runEstate(['pulse', 'status', '--json', '--data-dir', dir]);
    assert.deepEqual([json.code, json.stdout, json.stderr], [exit, `${JSON.stringify(answer)}\n`, '']);
  });
}

test('pulse status --url exits the same as locally; the pulse list itself exits 0 whatever it holds', async (t) => {
  const dir = await pulseDir(t, 'unhealthy');
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const remote = await runEstate(['pulse', 'status', '--json', '--url', server.url, '--api-key', key]);
  assert.deepEqual([remote.code, remote.stdout, remote.stderr], [2, '"unhealthy"\n', '']);
  const list = await runEstate(['pulse', '--json', '--data-dir', dir]);
  assert.equal(list.code, 0, list.stderr);
  assert.equal(list.json.items[0].status, 'unhealthy');
});

test('pulse status --help documents the exit codes', async () => {
  const help = await runEstate(['pulse', 'status', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /Exit status: 0 healthy, 1 degraded, 2 unhealthy, 3 unknown/);
});
