import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { parseConfig, resolveSecrets } from '../src/config.ts';
import { runEstate } from './helpers/cli.ts';
import { DEMO_FIXTURE, tempDataDir } from './helpers/data-dir.ts';

test('the config reports every problem with its path in the file', async (t) => {
  const cases: [string, unknown, string[]][] = [
    ['unknown keys, top and nested', { colour: 1, forge: { url: 'http://f', tokn: 'x' } }, ['colour: unknown key', 'forge.tokn: unknown key']],
    ['bad forge url and timeout', { forge: { url: 'ftp://forge', timeout_ms: 0 } }, ['forge.url: ', 'forge.timeout_ms: ']],
    ['secret inline in a url', { forge: { url: 'http://me:pw@forge.local' } }, ['forge.url: must not contain credentials']],
    ['token_env not a variable name', { forge: { url: 'http://f', token_env: 'MY TOKEN' } }, ['forge.token_env: ']],
    [
      'providers',
      { providers: [{ name: 'a', url: 'http://a', expect_status: 99 }, { name: 'a', url: 'nope' }, { url: 'http://c' }] },
      ['providers.0.expect_status: ', 'providers.1.url: ', 'providers.1.name: duplicate provider name "a"', 'providers.2.name: '],
    ],
    ['providers not a list', { providers: 'ollama' }, ['providers: ']],
    ['stats command as a shell string', { stats: { command: 'python3 stats.py | jq' } }, ['stats.command: ']],
    ['stats command empty', { stats: { command: [] } }, ['stats.command: ']],
  ];
  for (const [name, raw, problems] of cases) {
    await t.test(name, () => {
      assert.throws(
        () => parseConfig(JSON.stringify(raw), '/data/estate.config.json'),
        (err: Error & { code?: string }) => {
          assert.equal(err.code, 'usage');
          assert.match(err.message, /^config \/data\/estate\.config\.json is invalid: /);
          for (const p of problems) assert.ok(err.message.includes(p), `"${p}" missing from: ${err.message}`);
          assert.equal(err.message.split('; ').length, problems.length, err.message);
          return true;
        },
      );
    });
  }
});

test('defaults fill the config, and the forge token comes from the variable the config names', () => {
  const config = parseConfig(JSON.stringify({ forge: { url: 'http://forge.local:3000' }, stats: { command: ['./s'] }, providers: [{ name: 'p', url: 'http://p' }] }), 'x');
  assert.deepEqual(config.forge, { url: 'http://forge.local:3000', token_env: 'FORGEJO_TOKEN', timeout_ms: 5000, cache_s: 30, max_bytes: 16 * 1024 * 1024 });
  assert.deepEqual(config.stats, { command: ['./s'], timeout_ms: 10_000, cache_s: 300 });
  assert.deepEqual(config.providers, [{ name: 'p', url: 'http://p', timeout_ms: 3000 }]);
  assert.equal(config.providers_cache_s, 60);
  const cases: [object, NodeJS.ProcessEnv, string | undefined][] = [
    [config, { FORGEJO_TOKEN: 't1' }, 't1'],
    [config, { FORGEJO_TOKEN: '' }, undefined],
    [config, {}, undefined],
    [parseConfig(JSON.stringify({ forge: { url: 'http://f', token_env: 'GITEA_PAT' } }), 'x'), { GITEA_PAT: 't2', FORGEJO_TOKEN: 'no' }, 't2'],
    [parseConfig('{}', 'x'), { FORGEJO_TOKEN: 'unused' }, undefined],
  ];
  for (const [c, env, token] of cases) assert.equal(resolveSecrets(c as typeof config, env).forgeToken, token);
});

test('an invalid config stops a command with exit 2 and names each problem; --config overrides the data dir\'s', async (t) => {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ providers: [{ name: 'x', url: 'gopher://x' }], stats: { command: 'sh -c x' } }));
  const bad = await runEstate(['providers', '--data-dir', dir]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^estate: config .*estate\.config\.json is invalid: providers\.0\.url: [^;]+; stats\.command: [^\n]+\n$/);
  const other = path.join(dir, 'other.json');
  await writeFile(other, JSON.stringify({ providers: [] }));
  const good = await runEstate(['providers', '--json', '--data-dir', dir, '--config', other]);
  assert.equal(good.code, 0, good.stderr);
  assert.equal(good.json.count, 0);
});

test('a config checked a section at a time is what the whole schema makes of it', async () => {
  const { configSchema } = await import('../src/config.ts');
  const configs: object[] = [
    {},
    { node_name: 'hub' },
    JSON.parse(await readFile(path.join(DEMO_FIXTURE, 'estate.config.json'), 'utf8')),
    {
      store: 'data-dir',
      node_name: 'n',
      forge: { url: ' http://forge:3000 ', token_env: 'T' },
      providers: [{ name: 'a', url: 'http://a', expect_status: 200 }],
      providers_cache_s: 5,
      stats: { command: ['./s'] },
      identity: { name: 'x', links: [{ label: 'l', url: 'https://l.example' }] },
      events: { stale_after_s: 60 },
      collect: { retention: '30d' },
      training: { max_runs_per_user: 10 },
      serve: { port: 0, cors_origins: ['https://dash.example.org'], timeouts: { headers_ms: 1000 } },
    },
  ];
  for (const raw of configs) assert.deepEqual(parseConfig(JSON.stringify(raw), 'x'), configSchema().parse(raw), JSON.stringify(raw));
});
