import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { z } from 'zod';
import { checkOperations } from '../src/api/check-operations.ts';
import { defineOperation } from '../src/api/define-operation.ts';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { fakeIssues, refusedUrl, startFakeForge } from './helpers/fake-upstreams.ts';
import { newKey, startServer } from './helpers/server.ts';

async function setup(t: Parameters<typeof tempDataDir>[0], forgeUrl: string) {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ forge: { url: forgeUrl, timeout_ms: 5000 } }));
  await writeFile(path.join(dir, 'repos.json'), JSON.stringify([{ name: 'org/repo-001', url: 'https://example.org/r1' }]));
  return dir;
}

test('estate forge repos, forge issues OWNER/REPO and repos print the same bodies as their routes', async (t) => {
  const forge = await startFakeForge(t, { repos: 60, token: 'tok', issues: { 'org/app': fakeIssues(30) } });
  const dir = await setup(t, forge.url);
  const key = await newKey(dir);
  const server = await startServer(t, dir, { env: { FORGEJO_TOKEN: 'tok' } });
  const env = { FORGEJO_TOKEN: 'tok' };
  const cases: [string[], string][] = [
    [['forge', 'repos'], '/forgejo-proxy/repos'],
    [['forge', 'issues', 'org/app'], '/forgejo-proxy/issues/org/app'],
    [['forge', 'issues', 'org/app', '--state', 'all', '--limit', '5'], '/forgejo-proxy/issues/org/app?state=all&limit=5'],
    [['repos'], '/repos'],
  ];
  for (const [args, route] of cases) {
    await t.test(args.join(' '), async () => {
      const [cli, http] = await Promise.all([runEstate([...args, '--json', '--data-dir', dir], { env }), server.get(route, { 'X-API-Key': key })]);
      assert.equal(cli.code, 0, cli.stderr);
      assert.equal(http.status, 200);
      assert.deepEqual(cli.json, http.json);
      assert.equal(cli.stderr, '', 'no progress line when stderr is not a terminal');
    });
  }
  const remote = await runEstate(['forge', 'issues', 'org/app', '--limit', '2', '--json', '--url', server.url, '--api-key', key]);
  assert.equal(remote.code, 0, remote.stderr);
  assert.equal(remote.json.count, 2);
});

test('estate forge issues: a bad OWNER/REPO is a usage error (exit 2), a broken forge exit 1 with one clear line', async (t) => {
  const dir = await setup(t, await refusedUrl());
  const cases: [string[], number, RegExp][] = [
    [['forge', 'issues', 'justone'], 2, /^estate: <owner\/repo> must look like OWNER\/REPO, not "justone"\n$/],
    [['forge', 'issues', 'a/b/c'], 2, /must look like OWNER\/REPO/],
    [['forge', 'issues', 'a b/c'], 2, /^estate: invalid <owner>: String should be a forge name: /],
    [['forge', 'issues', 'org/app', '--state', 'merged'], 2, /^estate: invalid --state: Input should be 'open', 'closed' or 'all'/],
    [['forge', 'issues', 'org/app'], 1, /^estate: the forge at http:\/\/127\.0\.0\.1:\d+ is unreachable: connect ECONNREFUSED [^\n]+\n$/],
    [['forge', 'repos'], 1, /^estate: the forge at .* is unreachable/],
  ];
  for (const [args, code, stderr] of cases) {
    await t.test(args.join(' '), async () => {
      const r = await runEstate([...args, '--data-dir', dir]);
      assert.equal(r.code, code, r.stderr);
      assert.match(r.stderr, stderr);
      assert.equal(r.stdout, '');
    });
  }
  const repos = await runEstate(['repos', '--data-dir', dir]);
  assert.equal(repos.code, 0, repos.stderr);
  assert.match(repos.stdout, /^org\/repo-001\tledger\t/m, 'piped: TSV');
  assert.match(repos.stderr, /^estate: forge_error: the forge at .* is unreachable/m, 'the partial failure on stderr, not in the data');
});

test('the operations table accepts `owner/repo` CLI arguments only when both are path parameters', () => {
  const op = (args: string[]) =>
    defineOperation({
      id: 'x.issues',
      method: 'GET',
      path: '/x/{owner}/{repo}',
      access: 'public',
      tag: 'x',
      summary: 'x',
      input: { path: z.object({ owner: z.string(), repo: z.string() }) },
      output: z.object({}),
      handler: () => ({}),
      cli: { command: 'x', args, examples: [] },
    });
  assert.equal(checkOperations([op(['owner/repo'])]).length, 1);
  assert.throws(() => checkOperations([op(['owner/name'])]), /x\.issues: CLI argument owner\/name names name, which is not a path parameter/);
});
