import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';

// Contexts: named servers with a credential source in the user's
// $XDG_CONFIG_HOME/estate/contexts.json, through the real CLI, calling real
// servers. The precedence is flags > environment > contexts file.

/** A temp HOME and XDG_CONFIG_HOME (no contexts file yet), removed after the test. */
async function tempHome(t: Pick<TestContext, 'after'>) {
  const home = await mkdtemp(path.join(os.tmpdir(), 'estate-home-'));
  t.after(() => rm(home, { recursive: true, force: true }));
  const env = { HOME: home, XDG_CONFIG_HOME: path.join(home, 'cfg') };
  return { home, env, file: path.join(env.XDG_CONFIG_HOME, 'estate', 'contexts.json') };
}

/** A data dir whose `state/heartbeat.json` says `who`, so an answer shows which estate it came from. */
async function namedDataDir(t: TestContext, who: string): Promise<string> {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'state', 'heartbeat.json'), JSON.stringify({ who }));
  return dir;
}

const who = (r: { json: any }) => (r.json?.content ? JSON.parse(r.json.content).who : undefined);

test('context set, list, show, use and delete keep a 0600 file and never show a key', async (t) => {
  const { env, file } = await tempHome(t);
  const run = (...args: string[]) => runEstate(args, { env });

  const added = await run('context', 'set', 'hub', '--url', 'http://hub.example:8080', '--api-key-env', 'HUB_KEY');
  assert.equal(added.code, 0, added.stderr);
  assert.equal(added.stdout, '');
  assert.equal((await stat(file)).mode & 0o777, 0o600);
  assert.equal((await stat(path.dirname(file))).mode & 0o777, 0o700);
  assert.equal((await run('context', 'set', 'lab', '--url', 'https://lab.example', '--api-key-file', '/keys/lab')).code, 0);
  assert.equal((await run('context', 'use', 'lab')).code, 0);

  const list = await run('context', 'list', '--json');
  assert.equal(list.code, 0, list.stderr);
  assert.deepEqual(list.json, {
    items: [
      { name: 'hub', current: false, url: 'http://hub.example:8080', credential: '$HUB_KEY' },
      { name: 'lab', current: true, url: 'https://lab.example', credential: 'file /keys/lab' },
    ],
    count: 2,
    current: 'lab',
  });
  assert.equal((await run('context', 'show', '--json')).json.name, 'lab');
  assert.equal((await run('context', 'show', 'hub', '--json')).json.url, 'http://hub.example:8080');

  // Changing the URL keeps the credential source; a new credential source replaces the old one.
  assert.equal((await run('context', 'set', 'hub', '--url', 'http://hub2.example')).code, 0);
  assert.equal((await run('context', 'set', 'hub', '--api-key-file', '/keys/hub')).code, 0);
  assert.deepEqual(JSON.parse(await readFile(file, 'utf8')).contexts.hub, { url: 'http://hub2.example', api_key_file: '/keys/hub' });

  const deleted = await run('context', 'delete', 'lab');
  assert.equal(deleted.code, 0, deleted.stderr);
  assert.deepEqual(JSON.parse(await readFile(file, 'utf8')), { contexts: { hub: { url: 'http://hub2.example', api_key_file: '/keys/hub' } } });
  assert.equal((await stat(file)).mode & 0o777, 0o600);

  const refusals: [string, string[], number, RegExp][] = [
    ['a new context without --url', ['context', 'set', 'new'], 2, /new: give its --url/],
    ['a URL that is not one', ['context', 'set', 'x', '--url', 'notaurl'], 2, /--url is not a server address/],
    ['two credential sources', ['context', 'set', 'hub', '--api-key-env', 'A', '--api-key-file', '/k'], 2, /cannot be used with/],
    ['a bad variable name', ['context', 'set', 'hub', '--api-key-env', 'NOT-A-NAME'], 2, /environment variable name/],
    ['a bad context name', ['context', 'set', '../x', '--url', 'http://x'], 2, /is not a context name/],
    ['using an unknown context', ['context', 'use', 'nosuch'], 3, /no context named "nosuch"/],
    ['deleting an unknown context', ['context', 'delete', 'nosuch'], 3, /no context named "nosuch"/],
  ];
  for (const [name, args, code, stderr] of refusals) {
    await t.test(name, async () => {
      const r = await run(...args);
      assert.equal(r.code, code, r.stderr);
      assert.match(r.stderr, stderr);
    });
  }
});

test('a context calls its server with the key from its variable, its file or the file itself', async (t) => {
  const { home, env, file } = await tempHome(t);
  const dir = await namedDataDir(t, 'hub');
  const key = await newKey(dir, 'alice');
  const server = await startServer(t, dir);
  const keyFile = path.join(home, 'hub.key');
  await writeFile(keyFile, `${key}\n`, { mode: 0o600 });
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(
    file,
    JSON.stringify({
      current: 'by-env',
      contexts: {
        'by-env': { url: server.url, api_key_env: 'HUB_KEY' },
        'by-file': { url: server.url, api_key_file: '~/hub.key' },
        inline: { url: server.url, api_key: key },
        none: { url: server.url },
      },
    }),
    { mode: 0o600 },
  );
  const cases: [string, string[], Record<string, string>, number, RegExp | undefined][] = [
    ['the current context, key from its variable', [], { HUB_KEY: key }, 0, undefined],
    ['--context, key from a file under ~', ['--context', 'by-file'], {}, 0, undefined],
    ['ESTATE_CONTEXT, inline key', [], { ESTATE_CONTEXT: 'inline' }, 0, undefined],
    ['its variable unset: exit 4 before any request', [], {}, 4, /^estate: context by-env takes its API key from \$HUB_KEY, which is not set\n$/],
    ['a context without credential: the server refuses, exit 4', ['--context', 'none'], {}, 4, /needs a credential for this: pass --api-key or set ESTATE_API_KEY/],
    ['an unknown context: exit 2', ['--context', 'nosuch'], {}, 2, /no context named "nosuch" \(from --context\)/],
  ];
  for (const [name, args, extraEnv, code, stderr] of cases) {
    await t.test(name, async () => {
      const r = await runEstate(['state', 'heartbeat', '--json', ...args], { env: { ...env, ...extraEnv } });
      assert.equal(r.code, code, r.stderr);
      if (code === 0) assert.equal(who(r), 'hub');
      if (stderr) assert.match(r.stderr, stderr);
      assert.ok(!r.stderr.includes(key), 'no message shows the key');
    });
  }

  await t.test('a key file others may read is refused', async () => {
    await chmod(keyFile, 0o644);
    const r = await runEstate(['state', 'heartbeat', '--context', 'by-file'], { env });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /the key file of context by-file .*hub\.key has mode 0644: others may read or change it; run chmod 600/);
    assert.ok(!r.stderr.includes(key));
  });
});

test('the contexts file must be private when it names a credential (mode 0600, as ssh asks)', async (t) => {
  const { env, file } = await tempHome(t);
  const dir = await namedDataDir(t, 'hub');
  const server = await startServer(t, dir);
  await mkdir(path.dirname(file), { recursive: true });
  const withKey = { current: 'hub', contexts: { hub: { url: server.url, api_key: 'est_000000000000_secretsecretsecret' } } };
  const withEnv = { current: 'hub', contexts: { hub: { url: server.url, api_key_env: 'HUB_KEY' } } };
  const urlOnly = { current: 'hub', contexts: { hub: { url: server.url } } };
  const cases: [string, object, number, number, RegExp | undefined][] = [
    ['an inline key, 0644', withKey, 0o644, 2, /contexts\.json names credentials but its mode is 0644: others may read it; run chmod 600 /],
    ['an inline key, 0640', withKey, 0o640, 2, /mode is 0640/],
    ['a variable name, 0604', withEnv, 0o604, 2, /mode is 0604/],
    ['an inline key, 0600', withKey, 0o600, 4, /refused the API key \(from context hub\)/],
    ['an inline key, 0400', withKey, 0o400, 4, /refused the API key/],
    ['no credential, 0644', urlOnly, 0o644, 4, /needs a credential/],
    ['no credential, 0664: others may change the URL', urlOnly, 0o664, 2, /has mode 0664: others may change it; run chmod 600/],
  ];
  for (const [name, content, mode, code, stderr] of cases) {
    await t.test(name, async () => {
      await rm(file, { force: true });
      await writeFile(file, JSON.stringify(content), { mode });
      await chmod(file, mode);
      const r = await runEstate(['trends'], { env });
      assert.equal(r.code, code, r.stderr);
      if (stderr) assert.match(r.stderr, stderr);
      assert.ok(!r.stderr.includes('secretsecret'), 'no message shows the key');
    });
  }
});

test('precedence: flags beat the environment, which beats the contexts file; two choices on one level are a usage error', async (t) => {
  const { env: homeEnv, file } = await tempHome(t);
  const [dirA, dirB, local] = await Promise.all([namedDataDir(t, 'A'), namedDataDir(t, 'B'), namedDataDir(t, 'local')]);
  const [keyA, keyB] = await Promise.all([newKey(dirA), newKey(dirB)]);
  const [a, b] = await Promise.all([startServer(t, dirA), startServer(t, dirB)]);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify({ current: 'a', contexts: { a: { url: a.url, api_key_env: 'KEY_A' }, b: { url: b.url, api_key_env: 'KEY_B' } } }), { mode: 0o600 });
  const keys = { KEY_A: keyA, KEY_B: keyB };

  // [case, flags, environment, who answers (or the exit code and message)]
  const cases: [string, string[], Record<string, string>, string | [number, RegExp]][] = [
    ['the current context', [], keys, 'A'],
    ['ESTATE_CONTEXT beats the current context', [], { ...keys, ESTATE_CONTEXT: 'b' }, 'B'],
    ['ESTATE_URL beats the current context', [], { ESTATE_URL: b.url, ESTATE_API_KEY: keyB }, 'B'],
    ['ESTATE_DATA_DIR beats the current context', [], { ...keys, ESTATE_DATA_DIR: local }, 'local'],
    ['--context beats ESTATE_URL', ['--context', 'b'], { ...keys, ESTATE_URL: a.url }, 'B'],
    ['--url beats ESTATE_CONTEXT', ['--url', b.url, '--api-key', keyB], { ESTATE_CONTEXT: 'a', KEY_A: keyA }, 'B'],
    ['--data-dir beats ESTATE_URL', ['--data-dir', local], { ESTATE_URL: a.url }, 'local'],
    ['--api-key beats the context key', ['--context', 'b', '--api-key', keyB], { KEY_B: 'est_000000000000_wrongwrongwrong' }, 'B'],
    ['ESTATE_API_KEY beats the context key', ['--context', 'b'], { ESTATE_API_KEY: keyB }, 'B'],
    ['--api-key beats ESTATE_API_KEY', ['--url', a.url, '--api-key', keyA], { ESTATE_API_KEY: keyB }, 'A'],
    ['a context key never goes to --url', ['--url', a.url], keys, [4, /needs a credential for this: pass --api-key or set ESTATE_API_KEY/]],
    ['--url with --data-dir', ['--url', a.url, '--data-dir', local], keys, [2, /^estate: --url asks a server and --data-dir the local data dir: pass one or the other\n$/]],
    ['--context with --data-dir', ['--context', 'a', '--data-dir', local], keys, [2, /--context asks a server and --data-dir/]],
    ['--url with --context', ['--url', a.url, '--context', 'b'], keys, [2, /--url and --context both name a server/]],
    ['ESTATE_URL with ESTATE_DATA_DIR', [], { ESTATE_URL: a.url, ESTATE_DATA_DIR: local }, [2, /ESTATE_URL and ESTATE_DATA_DIR are both set/]],
    ['ESTATE_URL with ESTATE_CONTEXT', [], { ...keys, ESTATE_URL: a.url, ESTATE_CONTEXT: 'b' }, [2, /ESTATE_URL and ESTATE_CONTEXT are both set/]],
  ];
  for (const [name, flags, env, expected] of cases) {
    await t.test(name, async () => {
      const r = await runEstate(['state', 'heartbeat', '--json', ...flags], { env: { ...homeEnv, ...env } });
      if (typeof expected === 'string') {
        assert.equal(r.code, 0, r.stderr);
        assert.equal(who(r), expected);
      } else {
        assert.equal(r.code, expected[0], r.stderr);
        assert.match(r.stderr, expected[1]);
        assert.equal(r.stdout, '');
      }
      for (const k of [keyA, keyB]) assert.ok(!r.stderr.includes(k), 'no message shows a key');
    });
  }
});
