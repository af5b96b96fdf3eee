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
  const r = await runEstate(['doctor', '--data-dir', dir], { env: { FORGEJO_TOKEN: 'tok' } });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  assert.deepEqual(lines.map((l) => l.split(/\s{2,}/).slice(0, 2)), [
    ['ok', 'data dir'],
    ['ok', 'config'],
    ['ok', 'store'],
    ['ok', 'forge'],
    ['ok', 'provider llm'],
    ['ok', 'stats'],
  ]);
  assert.match(r.stdout, /config +.*estate\.config\.json: valid \(forge, 1 provider, stats\)/);
  assert.equal(r.stderr, '');
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
