import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { refusedUrl } from './helpers/fake-upstreams.ts';
import { newKey, startServer } from './helpers/server.ts';

// `estate pulse status` exits with the Nagios plugin codes, so it drops into
// cron and Nagios-style checks: 0 healthy, 1 degraded, 2 unhealthy, 3 unknown;
// and, as the monitoring plugins do, 3 unknown for any error (a bad option,
// an unreachable server, a refused key, a missing data dir), with one line on stderr.

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
  assert.match(help.stdout, /When the answer cannot be had \(a bad option, an unreachable server, a refused\s+credential, a missing data dir\): 3 unknown, with one line on stderr/);
});

test('pulse status: any error exits 3 (unknown), with one line on stderr; other commands keep their codes', async (t) => {
  const dir = await pulseDir(t, 'healthy');
  const server = await startServer(t, dir);
  const missing = path.join(dir, 'nope');
  const cases: [string, string[], RegExp][] = [
    ['an unknown option', ['--bogus'], /^estate: unknown option '--bogus' \(see estate pulse status --help\)\n$/],
    ['a typo of an option, with its suggestion on the same line', ['--apiky'], /^estate: unknown option '--apiky' \(did you mean --api-key\?\)\n$/],
    ['a typo of an option with a value', ['--apiky=SECRET123'], /^estate: unknown option '--apiky=…' \(see estate pulse status --help\)\n$/],
    ['an argument too many', ['extra'], /^estate: too many arguments for 'status'\. Expected 0 arguments but got 1 \(see estate pulse status --help\)\n$/],
    ['a bad -o', ['-o', 'nope'], /^estate: option '-o, --output <format>' argument 'nope' is invalid\. Allowed choices are [^\n]*\n$/],
    ['--url with --data-dir', ['--url', server.url, '--data-dir', dir], /^estate: --url asks a server and --data-dir the local data dir: pass one or the other\n$/],
    ['a missing data dir', ['--data-dir', missing], /^estate: data directory .*nope does not exist/],
    ['--url notaurl', ['--url', 'notaurl'], /^estate: --url is not a server address/],
    ['an unreachable server', ['--url', await refusedUrl(), '--api-key', 'est_000000000000_notakeynotakeynotakey'], /^estate: cannot reach http:\/\/127\.0\.0\.1:\d+/],
    ['a refused key', ['--url', server.url, '--api-key', 'est_000000000000_notakeynotakeynotakey'], /^estate: http:\/\/127\.0\.0\.1:\d+ refused the API key \(from --api-key\)/],
    ['no key', ['--url', server.url], /needs a credential for this: pass --api-key or set ESTATE_API_KEY/],
  ];
  for (const [name, args, stderr] of cases) {
    await t.test(name, async () => {
      const r = await runEstate(['pulse', 'status', ...args]);
      assert.equal(r.code, 3, r.stderr);
      assert.match(r.stderr, stderr);
      assert.equal(r.stderr.split('\n').length, 2, `one line: ${r.stderr}`);
      assert.ok(!r.stderr.includes('SECRET123'));
      assert.equal(r.stdout, '');
    });
  }
  await t.test('the same errors on other commands keep the usual codes', async () => {
    assert.equal((await runEstate(['pulse', '--bogus'])).code, 2);
    assert.equal((await runEstate(['trends', '--bogus'])).code, 2);
    assert.equal((await runEstate(['pulse', '--data-dir', missing])).code, 2);
  });
});
