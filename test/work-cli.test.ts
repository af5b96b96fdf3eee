import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runEstate, startEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { logLines } from './helpers/records.ts';
import { newKey, startServer } from './helpers/server.ts';

// `estate work complete` locally and in remote mode (--url / ESTATE_URL):
// the same output and exit codes either way; and `estate work feed --follow`.

const LOG = 'work/completions.jsonl';

function completeArgs(id: string, extra: string[] = []): string[] {
  return ['work', 'complete', '--task-id', id, '--board', 'ops', '--assignee', 'cron', '--title', `Task ${id}`, ...extra];
}

async function setup(t: Parameters<typeof tempDataDir>[0]) {
  const dir = await tempDataDir(t);
  const key = await newKey(dir, 'cron');
  const server = await startServer(t, dir);
  const modes: [string, string[], Record<string, string>][] = [
    ['local', ['--data-dir', dir], {}],
    ['remote with --url', ['--url', server.url, '--api-key', key], {}],
    ['remote with ESTATE_URL', [], { ESTATE_URL: server.url, ESTATE_API_KEY: key }],
  ];
  return { dir, key, server, modes };
}

test('work complete: created then replayed, with the same output locally and remotely', async (t) => {
  const { dir, server, modes } = await setup(t);
  for (const [name, target, env] of modes) {
    await t.test(name, async () => {
      const id = `T-${name.replace(/\W+/g, '-')}`;
      const created = await runEstate([...completeArgs(id, ['--commit-sha', 'abcdef12']), '--json', ...target], { env });
      assert.equal(created.code, 0, created.stderr);
      assert.match(created.json.id, /^wc_[0-9a-f]{16}$/);
      assert.equal(created.json.commit_sha, 'abcdef12');
      const feed = await server.get('/work/feed?limit=1');
      assert.deepEqual(feed.json.items[0], created.json);
      // A replay, from any mode, prints the same record and writes nothing.
      for (const [, other, otherEnv] of modes) {
        const again = await runEstate([...completeArgs(id, ['--commit-sha', 'abcdef12']), '--json', ...other], { env: otherEnv });
        assert.equal(again.code, 0, again.stderr);
        assert.equal(again.stdout, created.stdout);
      }
      const tables = await Promise.all(modes.map(([, other, otherEnv]) => runEstate([...completeArgs(id, ['--commit-sha', 'abcdef12']), ...other], { env: otherEnv })));
      assert.ok(tables.every((r) => r.code === 0 && r.stdout === tables[0]?.stdout && r.stdout.includes(created.json.id)));
    });
  }
  assert.equal((await logLines(dir, LOG)).length, modes.length);
});

test('work complete: invalid input, conflicts and a refused credential exit the same way locally and remotely', async (t) => {
  const { dir, modes, server } = await setup(t);
  await runEstate([...completeArgs('T-taken'), '--data-dir', dir]);
  const cases: [string, string[], number, RegExp][] = [
    ['a missing --title', ['work', 'complete', '--task-id', 'T-1', '--board', 'ops', '--assignee', 'cron'], 2, /^estate: missing --title\n$/],
    ['a bad --board', completeArgs('T-2', ['--board', 'Ops!']), 2, /^estate: invalid --board: String should be a slug: lowercase letters, digits and hyphens[^\n]*\n$/],
    ['a bad --output-url', completeArgs('T-3', ['--output-url', 'javascript:alert(1)']), 2, /^estate: invalid --output-url: Input should be a valid URL with an http or https scheme\n$/],
    ['a conflict', completeArgs('T-taken', ['--summary', 'other']), 5, /^estate: (http:\/\/127\.0\.0\.1:\d+: )?task ops\/T-taken was already recorded \(wc_[0-9a-f]{16}\) with a different summary\n$/],
  ];
  for (const [name, args, code, stderr] of cases) {
    await t.test(name, async () => {
      const runs = await Promise.all(modes.map(([, target, env]) => runEstate([...args, ...target], { env })));
      for (const [i, run] of runs.entries()) {
        assert.equal(run.code, code, `${modes[i]?.[0]}: ${run.stderr}`);
        assert.match(run.stderr, stderr, modes[i]?.[0]);
        assert.equal(run.stdout, '');
      }
      if (code === 2) assert.equal(new Set(runs.map((r) => r.stderr)).size, 1, 'a 422 reads exactly the same');
    });
  }
  await t.test('remote without a credential: 403, exit 4', async () => {
    const run = await runEstate([...completeArgs('T-9'), '--url', server.url]);
    assert.equal(run.code, 4);
    assert.match(run.stderr, /^estate: http:\/\/127\.0\.0\.1:\d+ needs a credential for this: pass --api-key or set ESTATE_API_KEY/);
  });
  assert.equal((await logLines(dir, LOG)).length, 1);
});

test('work feed --follow, locally: prints the feed, then completions other processes record', async (t) => {
  const dir = await tempDataDir(t);
  await runEstate([...completeArgs('T-before'), '--data-dir', dir]);
  const follow = startEstate(t, ['work', 'feed', '--follow', '--json', '--board', 'ops', '--data-dir', dir]);
  await follow.waitForStdout('the initial feed', (out) => out.includes('"T-before"'));
  const [a, other, b] = await Promise.all([
    runEstate([...completeArgs('T-after-1'), '--data-dir', dir]),
    runEstate(['work', 'complete', '--task-id', 'T-x', '--board', 'garden', '--assignee', 'cron', '--title', 'Not ops', '--data-dir', dir]),
    runEstate([...completeArgs('T-after-2'), '--data-dir', dir]),
  ]);
  assert.deepEqual([a.code, other.code, b.code], [0, 0, 0]);
  await follow.waitForStdout('both new ops completions', (out) => out.includes('T-after-1') && out.includes('T-after-2'));
  const stopped = await follow.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
  // NDJSON only: the feed's one completion, then the followed ones.
  const [first, ...followed] = stopped.stdout.trim().split('\n').map((l) => JSON.parse(l).task_id);
  assert.equal(first, 'T-before');
  assert.deepEqual(followed.sort(), ['T-after-1', 'T-after-2']);
  assert.ok(!stopped.stdout.includes('T-x'), 'another board is not followed');
});

test('work feed --follow, remotely: completions recorded by the CLI arrive through the server', async (t) => {
  const { dir, server, key } = await setup(t);
  const follow = startEstate(t, ['work', 'feed', '--follow', '--url', server.url, '--api-key', key]);
  // The feed is empty: nothing to wait for (what is recorded after it is followed, from its start).
  const local = await runEstate([...completeArgs('T-from-cli'), '--data-dir', dir]);
  assert.equal(local.code, 0, local.stderr);
  const posted = await server.request('POST', '/work/complete', { body: { task_id: 'T-from-http', board: 'garden', assignee: 'x', title: 'Via HTTP' }, headers: { 'X-API-Key': key } });
  assert.equal(posted.status, 201);
  await follow.waitForStdout('both completions', (out) => out.includes('ops/T-from-cli  cron  Task T-from-cli') && out.includes('garden/T-from-http  x  Via HTTP'));
  const stopped = await follow.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
});
