import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate, startEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { startHanging } from './helpers/fake-upstreams.ts';
import { newKey, startServer } from './helpers/server.ts';
import { waitUntil } from './helpers/wait-until.ts';

// The CLI's contract with scripts: common options before the command, a
// capturable `keys create`, credentials checked before any request and never
// echoed, remote refusals in CLI words, and the exit codes of DESIGN.md
// section 7 (2 usage, 4 credential, 5 conflict) locally and remotely.

test('common options are accepted before the command too', async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir, 'cron');
  const server = await startServer(t, dir);
  await runEstate(['work', 'complete', '--task-id', 'T-1', '--board', 'ops', '--assignee', 'cron', '--title', 'One', '--data-dir', dir]);
  const cases: [string, string[], number, (r: Awaited<ReturnType<typeof runEstate>>) => void][] = [
    ['--data-dir before trends', ['--data-dir', dir, 'trends', '--json'], 0, (r) => assert.deepEqual(r.json.items, [])],
    ['--json and --data-dir before work feed', ['--json', '--data-dir', dir, 'work', 'feed'], 0, (r) => assert.equal(r.json.items[0].task_id, 'T-1')],
    ['--url and --api-key before work feed', ['--url', server.url, '--api-key', key, 'work', 'feed', '--json'], 0, (r) => assert.equal(r.json.count, 1)],
    ['--url and --api-key before a protected read', ['--url', server.url, '--api-key', key, 'events', '--json'], 0, (r) => assert.deepEqual(r.json.items, [])],
    ['--data-dir before keys list', ['--data-dir', dir, 'keys', 'list', '--json'], 0, (r) => assert.equal(r.json.count, 1)],
    ['a value after the command wins', ['--data-dir', '/nonexistent', 'trends', '--data-dir', dir, '--json'], 0, (r) => assert.equal(r.json.count, 0)],
    ['--url before and --data-dir after: a usage error', ['--url', server.url, 'trends', '--data-dir', dir], 2, (r) => assert.match(r.stderr, /--url asks a server and --data-dir/)],
    ['an option the command does not take', ['--url', server.url, 'init', dir], 2, (r) => assert.match(r.stderr, /^estate: --url does not apply to estate init\n$/)],
  ];
  for (const [name, args, code, check] of cases) {
    await t.test(name, async () => {
      const r = await runEstate(args);
      assert.equal(r.code, code, r.stderr);
      check(r);
    });
  }
});

test('keys create prints only the key on stdout, so KEY=$(estate keys create …) works', async (t) => {
  const dir = await tempDataDir(t);
  const server = await startServer(t, dir);
  const created = await runEstate(['keys', 'create', '--user', 'cron', '--data-dir', dir]);
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stdout, /^est_[0-9a-f]{12}_[A-Za-z0-9_-]+\n$/);
  assert.match(created.stderr, /^key [0-9a-f]{12} for user cron \(read,write\) created; it is shown only once, store it now\n$/);
  const key = created.stdout.trim();
  const used = await runEstate(['events', '--json', '--url', server.url, '--api-key', key]);
  assert.equal(used.code, 0, used.stderr);
  const json = await runEstate(['keys', 'create', '--user', 'cron', '--json', '--data-dir', dir]);
  assert.deepEqual(Object.keys(json.json), ['key_id', 'user_id', 'key', 'scopes', 'expires_at']);
});

test('an API key that cannot be a header value is refused before any request, and never echoed', async (t) => {
  const dir = await tempDataDir(t);
  const requests: unknown[] = [];
  const server = await startServer(t, dir, { log: (line) => void (line.path !== undefined && requests.push(line)) });
  const bad: [string, string][] = [
    ['a space', 'est_0123 secretvalue'],
    ['a tab', 'est_0123\tsecretvalue'],
    ['a newline', 'est_0123\nX-Other: secretvalue'],
    ['non-ASCII', 'est_0123_sécretvalue'],
    ['empty', ''],
  ];
  for (const [name, key] of bad) {
    for (const [how, args, env] of [
      ['--api-key', ['--api-key', key], {}],
      ['ESTATE_API_KEY', [], { ESTATE_API_KEY: key }],
    ] as const) {
      if (how === 'ESTATE_API_KEY' && key === '') continue; // an empty variable is an unset one
      await t.test(`${name} in ${how}`, async () => {
        const r = await runEstate(['trends', '--url', server.url, ...args], { env: { ...env } });
        assert.equal(r.code, 2, r.stderr);
        assert.match(r.stderr, new RegExp(`^estate: the API key from ${how} cannot be sent: it holds spaces, control characters or non-ASCII characters`));
        assert.ok(!r.stderr.includes('secretvalue'), r.stderr);
      });
    }
  }
  assert.deepEqual(requests, [], 'no request reached the server');
});

test('the server address is checked before any request: --url notaurl is a usage error', async () => {
  const cases: [string, string[], Record<string, string>, RegExp][] = [
    ['--url notaurl', ['--url', 'notaurl'], {}, /^estate: --url is not a server address: give an http\(s\) URL such as http:\/\/hub:8080\n$/],
    ['--url without a scheme', ['--url', 'hub:8080'], {}, /--url is not a server address/],
    ['--url ftp://', ['--url', 'ftp://hub/'], {}, /--url is not a server address/],
    ['an empty --url', ['--url', ''], {}, /--url is not a server address/],
    ['ESTATE_URL notaurl', [], { ESTATE_URL: 'notaurl' }, /^estate: ESTATE_URL is not a server address/],
    ['a password in the URL', ['--url', 'http://u:hunter2secret@127.0.0.1:9'], {}, /--url must not hold a user or password/],
    ['a query in the URL', ['--url', 'http://127.0.0.1:9/?api_key=hunter2secret'], {}, /without \?query or #fragment/],
  ];
  for (const [name, args, env, stderr] of cases) {
    const r = await runEstate(['trends', ...args], { env });
    assert.equal(r.code, 2, `${name}: ${r.stderr}`);
    assert.match(r.stderr, stderr, name);
    assert.ok(!r.stderr.includes('hunter2secret'), name);
  }
});

test('exit 4 when the credential is missing or refused, exit 5 on a conflicting write, locally and remotely; messages speak CLI', async (t) => {
  const dir = await tempDataDir(t);
  const writer = await newKey(dir, 'cron');
  const server = await startServer(t, dir);
  const { key: reader } = JSON.parse((await runEstate(['keys', 'create', '--user', 'cron', '--scope', 'read', '--json', '--data-dir', dir])).stdout);
  const wrong = 'est_000000000000_notakeynotakeynotakey';
  const complete = (id: string, summary: string) => ['work', 'complete', '--task-id', id, '--board', 'ops', '--assignee', 'cron', '--title', 'T', '--summary', summary];
  assert.equal((await runEstate([...complete('T-taken', 'first'), '--data-dir', dir])).code, 0);
  const config = path.join(path.dirname(dir), 'config');
  await mkdir(path.join(config, 'estate'), { recursive: true });
  await writeFile(path.join(config, 'estate', 'contexts.json'), JSON.stringify({ contexts: { hub: { url: server.url, api_key_env: 'HUB_KEY' } } }), { mode: 0o600 });

  const cases: [string, string[], Record<string, string>, number, RegExp][] = [
    ['remote, no credential', ['trends', '--url', server.url], {}, 4, /^estate: http:\/\/127\.0\.0\.1:\d+ needs a credential for this: pass --api-key or set ESTATE_API_KEY/],
    ['remote, an unknown key in --api-key', ['trends', '--url', server.url, '--api-key', wrong], {}, 4, /^estate: http:\/\/127\.0\.0\.1:\d+ refused the API key \(from --api-key\): it is unknown there, revoked or expired/],
    ['remote, an unknown key in ESTATE_API_KEY', ['trends'], { ESTATE_URL: server.url, ESTATE_API_KEY: wrong }, 4, /refused the API key \(from ESTATE_API_KEY\)/],
    ['remote, a read-only key writing', [...complete('T-new', 'x'), '--url', server.url, '--api-key', reader], {}, 4, /refused the API key \(from --api-key\) for this: .*"write" scope/],
    ['before any request, a context whose key variable is unset', ['trends'], { ESTATE_CONTEXT: 'hub', XDG_CONFIG_HOME: config }, 4, /^estate: context hub takes its API key from \$HUB_KEY, which is not set\n$/],
    ['remote, a conflicting write', [...complete('T-taken', 'other'), '--url', server.url, '--api-key', writer], {}, 5, /task ops\/T-taken was already recorded/],
    ['locally, a conflicting write', [...complete('T-taken', 'other'), '--data-dir', dir], {}, 5, /^estate: task ops\/T-taken was already recorded/],
    ['remote, not found', ['state', 'scoreboard', '--url', server.url, '--api-key', writer], {}, 3, /scoreboard/],
  ];
  for (const [name, args, env, code, stderr] of cases) {
    await t.test(name, async () => {
      const r = await runEstate(args, { env });
      assert.equal(r.code, code, r.stderr);
      assert.match(r.stderr, stderr);
      assert.doesNotMatch(r.stderr, /X-API-Key|api_key=|bearer/i, 'no HTTP header names');
      for (const k of [writer, reader, wrong]) assert.ok(!r.stderr.includes(k), 'no message shows a key');
      assert.equal(r.stdout, '');
    });
  }
});

test('an option typo carrying a secret never echoes the secret', async () => {
  const cases: string[][] = [
    ['trends', '--apiky=SECRET123'],
    ['trends', '--apiky', 'SECRET123'],
    ['trends', '--api_key=SECRET123'],
    ['--apiky=SECRET123', 'trends'],
    ['work', 'feed', '--follow', '--apikey=SECRET123'],
    ['pulse', 'status', '--apiky=SECRET123'],
  ];
  for (const args of cases) {
    const r = await runEstate(args);
    assert.equal(r.code, args[0] === 'pulse' ? 3 : 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /^estate: unknown option '--api/, args.join(' '));
    assert.ok(!r.stderr.includes('SECRET123'), `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '');
  }
});

test('Ctrl-C (SIGINT) on a one-shot command ends it with exit 130 (SIGTERM: 143)', async (t) => {
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    await t.test(signal, async (st) => {
      const hanging = await startHanging(st);
      const running = startEstate(st, ['trends', '--json', '--url', hanging.url, '--api-key', 'est_000000000000_notakeynotakeynotakey']);
      // Once its request is in, the CLI is well under way (its signal handlers set).
      await waitUntil('the request reaches the server', () => hanging.requests.length > 0);
      const stopped = await running.stop(signal);
      assert.equal(stopped.code, code, stopped.stderr);
      assert.equal(stopped.stdout, '');
    });
  }
});
