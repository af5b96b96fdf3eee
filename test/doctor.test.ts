import assert from 'node:assert/strict';
import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { refusedUrl, startAnswering, startFakeForge, startHanging } from './helpers/fake-upstreams.ts';

async function dataDirWith(t: Parameters<typeof tempDataDir>[0], config: object | string) {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), typeof config === 'string' ? config : JSON.stringify(config));
  await writeFile(path.join(dir, 'stats.sh'), '#!/bin/sh\necho {}\n');
  await chmod(path.join(dir, 'stats.sh'), 0o755);
  return dir;
}

test('estate doctor: all well is exit 0, one line per check', async (t) => {
  const [forge, provider] = await Promise.all([startFakeForge(t, { repos: 2, token: 'tok' }), startAnswering(t, 200)]);
  const dir = await dataDirWith(t, {
    forge: { url: forge.url, timeout_ms: 5000 },
    providers: [{ name: 'llm', url: provider.url, timeout_ms: 5000 }],
    stats: { command: ['./stats.sh'] },
  });
  assert.equal((await runEstate(['keys', 'create', '--user', 'alice', '--data-dir', dir])).code, 0);
  const r = await runEstate(['doctor', '--data-dir', dir], { env: { FORGEJO_TOKEN: 'tok' } });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  assert.deepEqual(lines.map((l) => l.split(/\s{2,}/).slice(0, 2)), [
    ['ok', 'data dir'],
    ['ok', 'config'],
    ['ok', 'store'],
    ['ok', 'API keys'],
    ['ok', 'forge'],
    ['ok', 'provider llm'],
    ['ok', 'stats'],
  ]);
  assert.match(r.stdout, /config +.*estate\.config\.json: valid \(forge, 1 provider, stats\)/);
  assert.match(r.stdout, /API keys +1 key neither revoked nor expired\n/);
  assert.equal(r.stderr, '');
});

test('estate doctor on a fresh data dir: no config file (defaults), and a warning that no API key exists, with the command that makes one', async (t) => {
  const home = await tempDataDir(t);
  const env = { HOME: home };
  const dir = path.join(home, '.local', 'share', 'estate');
  assert.equal((await runEstate(['init'], { env })).code, 0);
  const check = (r: { json: { checks: { name: string; status: string; detail: string; fix: string | null }[] } }, name: string) => r.json.checks.find((c) => c.name === name);

  const fresh = await runEstate(['doctor', '--json'], { env });
  assert.equal(fresh.code, 0, 'a warning is not a failure');
  assert.deepEqual(check(fresh, 'config'), { name: 'config', status: 'ok', detail: `no config file (defaults): ${dir}/estate.config.json is read when there is one`, fix: null });
  // The default data dir: the command needs no --data-dir.
  assert.deepEqual(check(fresh, 'API keys'), { name: 'API keys', status: 'warn', detail: 'no API key: every protected route answers 403', fix: 'create one with: estate keys create --user NAME' });
  const text = await runEstate(['doctor'], { env });
  assert.match(text.stdout, /^ok    config    no config file \(defaults\)/m);
  assert.match(text.stdout, /^WARN  API keys  no API key: every protected route answers 403\n +fix: create one with: estate keys create --user NAME\n/m);

  // Another data dir: the command names it.
  const other = await tempDataDir(t);
  const named = await runEstate(['doctor', '--json', '--data-dir', other], { env });
  assert.equal(check(named, 'API keys')?.fix, `create one with: estate keys create --user NAME --data-dir ${other}`);

  // ESTATE_API_KEY is a key a server started with it accepts.
  const withEnvKey = await runEstate(['doctor', '--json'], { env: { ...env, ESTATE_API_KEY: 'a-key-from-the-environment' } });
  assert.equal(check(withEnvKey, 'API keys')?.status, 'ok');

  // A key made: ok. Revoked: no live key again.
  const made = await runEstate(['keys', 'create', '--user', 'alice', '--json'], { env });
  assert.equal(made.code, 0, made.stderr);
  assert.equal(check(await runEstate(['doctor', '--json'], { env }), 'API keys')?.status, 'ok');
  assert.equal((await runEstate(['keys', 'revoke', made.json.key_id], { env })).code, 0);
  assert.equal(check(await runEstate(['doctor', '--json'], { env }), 'API keys')?.status, 'warn');

  // A config file that is there is named and called valid.
  await writeFile(path.join(dir, 'estate.config.json'), '{}');
  assert.equal(check(await runEstate(['doctor', '--json'], { env }), 'config')?.detail, `${dir}/estate.config.json: valid (no external sources)`);

  // A credential store that cannot be read fails, saying what to do.
  await writeFile(path.join(dir, 'keys.json'), '{"version": 1, "ke');
  const torn = await runEstate(['doctor', '--json'], { env });
  assert.equal(torn.code, 1);
  assert.equal(check(torn, 'API keys')?.status, 'fail');
  assert.match(check(torn, 'API keys')?.fix ?? '', /^restore .*keys\.json from a backup/);
});

test('estate doctor names what is wrong, with a fix, and exits 1', async (t) => {
  const [hanging, refused, forge] = await Promise.all([startHanging(t), refusedUrl(), startFakeForge(t, { token: 'right' })]);
  const cases: { name: string; config: object; env?: Record<string, string>; expect: [string, string, RegExp][] }[] = [
    {
      name: 'forge hanging, provider refused, stats missing, no token',
      config: { forge: { url: hanging.url, timeout_ms: 300 }, providers: [{ name: 'gone', url: refused, timeout_ms: 300 }], stats: { command: ['./missing.py'] } },
      expect: [
        ['WARN', 'forge token', /\$FORGEJO_TOKEN is not set[^\n]*\n +fix: export FORGEJO_TOKEN=/],
        ['FAIL', 'forge', /did not answer within 300 ms[^\n]*\n +fix: check that the forge runs; if it is only slow, raise forge\.timeout_ms \(now 300\)/],
        ['FAIL', 'provider gone', /unreachable: connect ECONNREFUSED[^\n]*\n +fix: check that the provider runs and that providers\[0\]\.url/],
        ['FAIL', 'stats', /missing\.py is not an executable file\n +fix: set stats\.command\[0\]/],
      ],
    },
    {
      name: 'forge refusing the token',
      config: { forge: { url: forge.url, timeout_ms: 5000 } },
      env: { FORGEJO_TOKEN: 'wrong' },
      expect: [['FAIL', 'forge', /answered 401 Unauthorized: user does not exist.*check the token in \$FORGEJO_TOKEN[^\n]*\n +fix: check forge\.url/]],
    },
    {
      name: 'invalid config',
      config: { forge: { url: 'ftp://x', colour: 'blue' }, providers: [{ name: 'a', url: 'http://a' }, { name: 'a', url: 'http://b' }] },
      expect: [['FAIL', 'config', /forge\.url: .*forge\.colour: unknown key.*providers\.1\.name: duplicate provider name "a"[^\n]*\n +fix: edit .*estate\.config\.json/]],
    },
  ];
  for (const c of cases) {
    await t.test(c.name, async (t) => {
      const dir = await dataDirWith(t, c.config);
      const r = await runEstate(['doctor', '--data-dir', dir], { env: c.env ?? {} });
      assert.equal(r.code, 1, r.stdout + r.stderr);
      for (const [status, name, detail] of c.expect) {
        const at = r.stdout.split('\n').findIndex((l) => l.startsWith(status) && l.slice(6).startsWith(`${name}  `));
        assert.ok(at >= 0, `no ${status} ${name} line in:\n${r.stdout}`);
        assert.match(r.stdout.split('\n').slice(at).join('\n'), detail);
      }
      assert.match(r.stderr, /^estate: doctor: \d+ of \d+ checks failed\n$/);
    });
  }
});

test('estate doctor on a missing data dir says how to create it; --json gives the checks', async (t) => {
  const dir = path.join(await tempDataDir(t), 'nope');
  const r = await runEstate(['doctor', '--data-dir', dir, '--json']);
  assert.equal(r.code, 1);
  assert.equal(r.json.ok, false);
  assert.deepEqual(r.json.checks[0], { name: 'data dir', status: 'fail', detail: `${dir} does not exist`, fix: `create it with: estate init ${dir}` });
  assert.deepEqual(r.json.checks.map((c: { name: string; status: string }) => [c.name, c.status]), [
    ['data dir', 'fail'],
    ['config', 'skip'],
  ]);
});

test('estate doctor on a missing default data dir suggests estate init alone, not a second directory', async (t) => {
  const home = await tempDataDir(t);
  const r = await runEstate(['doctor', '--json'], { env: { HOME: home } });
  assert.equal(r.code, 1);
  assert.deepEqual(r.json.checks[0], {
    name: 'data dir',
    status: 'fail',
    detail: `${path.join(home, '.local', 'share', 'estate')} does not exist`,
    fix: 'create it with: estate init, or name another with --data-dir DIR',
  });
});
