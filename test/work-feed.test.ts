import assert from 'node:assert/strict';
import { appendFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { DEMO_FIXTURE, tempDataDir } from './helpers/data-dir.ts';
import { startServer } from './helpers/server.ts';

// GET /work/feed and GET /estate/logs, and their CLI commands.

function completionLines(n: number, board: (i: number) => string = (i) => (i % 3 ? 'ops' : 'garden')): string {
  const start = Date.parse('2026-11-01T00:00:00Z');
  return Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      id: `wc_${i.toString(16).padStart(16, '0')}`,
      task_id: `T-${i}`,
      board: board(i),
      assignee: i % 2 ? 'scribe' : 'builder',
      title: `Task ${i}`,
      completed_at: new Date(start + i * 60_000).toISOString(),
    }),
  )
    .map((l) => `${l}\n`)
    .join('');
}

async function feedDir(t: Parameters<typeof tempDataDir>[0], n: number): Promise<string> {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'work', 'completions.jsonl'), completionLines(n));
  return dir;
}

test('GET /work/feed: newest first, limited, optionally of one board', async (t) => {
  const dir = await feedDir(t, 1200);
  const server = await startServer(t, dir);
  const cases: [string, number, string[]][] = [
    ['/work/feed', 20, ['T-1199', 'T-1198', 'T-1197']],
    ['/work/feed?limit=1', 1, ['T-1199']],
    ['/work/feed?limit=1000', 1000, ['T-1199', 'T-1198']],
    ['/work/feed?board=garden&limit=3', 3, ['T-1197', 'T-1194', 'T-1191']],
    ['/work/feed?board=ops&limit=2', 2, ['T-1199', 'T-1198']],
    ['/work/feed?board=research', 0, []],
  ];
  for (const [route, count, first] of cases) {
    await t.test(route, async () => {
      const r = await server.get(route);
      assert.equal(r.status, 200);
      assert.equal(r.json.count, count);
      assert.equal(r.json.items.length, count);
      assert.deepEqual(r.json.items.slice(0, first.length).map((i: { task_id: string }) => i.task_id), first);
      assert.equal(r.json.skipped_lines, 0);
      const board = new URL(route, 'http://x').searchParams.get('board');
      if (board) assert.ok(r.json.items.every((i: { board: string }) => i.board === board));
    });
  }
  const all = await server.get('/work/feed?board=garden&limit=1000');
  assert.equal(all.json.count, 400);
});

test('GET /work/feed: bad limit or board is 422 at the parameter', async (t) => {
  const server = await startServer(t, await tempDataDir(t));
  const cases: [string, string, string][] = [
    ['limit=0', 'limit', 'greater_than_equal'],
    ['limit=1001', 'limit', 'less_than_equal'],
    ['limit=ten', 'limit', 'int_parsing'],
    ['board=Ops', 'board', 'string_pattern_mismatch'],
    [`board=${'a'.repeat(65)}`, 'board', 'string_too_long'],
  ];
  for (const [query, field, type] of cases) {
    await t.test(query, async () => {
      const r = await server.get(`/work/feed?${query}`);
      assert.equal(r.status, 422);
      assert.deepEqual(r.json.detail.map((d: { loc: unknown }) => d.loc), [['query', field]]);
      assert.equal(r.json.detail[0].type, type);
    });
  }
});

test('the feed sees completions another process appends, and skips corrupt or torn lines', async (t) => {
  const dir = await feedDir(t, 5);
  const file = path.join(dir, 'work', 'completions.jsonl');
  const server = await startServer(t, dir);
  assert.equal((await server.get('/work/feed')).json.count, 5);
  await appendFile(file, `not json\n{"task_id":"no-id"}\n${completionLines(7).split('\n')[6]}\n{"id":"wc_torn","task_id":"T-`);
  const r = await server.get('/work/feed?limit=3');
  assert.deepEqual(r.json.items.map((i: { task_id: string }) => i.task_id), ['T-6', 'T-4', 'T-3']);
  assert.equal(r.json.skipped_lines, 3);
  const ops = await server.get('/work/feed?limit=3&board=ops');
  assert.deepEqual(ops.json.items.map((i: { task_id: string }) => i.task_id), ['T-4', 'T-2', 'T-1']);
  assert.equal(ops.json.skipped_lines, 3);
  const missing = await startServer(t, await tempDataDir(t));
  assert.deepEqual((await missing.get('/work/feed')).json, { items: [], count: 0, limit: 20, skipped_lines: 0 });
});

test('GET /estate/logs: recent activity from the completion feed', async (t) => {
  const dir = await feedDir(t, 30);
  const server = await startServer(t, dir);
  const r = await server.get('/estate/logs');
  assert.equal(r.status, 200);
  assert.equal(r.json.count, 20);
  assert.equal(r.json.limit, 20);
  assert.deepEqual(r.json.items[0], {
    ts: '2026-11-01T00:29:00.000Z',
    agent: 'scribe',
    message: 'scribe completed ops/T-29: Task 29',
    board: 'ops',
    task_id: 'T-29',
    title: 'Task 29',
    completion_id: 'wc_000000000000001d',
    url: null,
  });
  assert.equal((await server.get('/estate/logs?limit=2')).json.count, 2);
  assert.equal((await server.get('/estate/logs?limit=1001')).status, 422);
});

test('estate work feed and estate logs print the same bodies as the routes', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const server = await startServer(t, dir);
  const cases: [string[], string][] = [
    [['work', 'feed'], '/work/feed'],
    [['work', 'feed', '--board', 'ops', '--limit', '5'], '/work/feed?board=ops&limit=5'],
    [['logs', '--limit', '3'], '/estate/logs?limit=3'],
  ];
  for (const [args, route] of cases) {
    await t.test(args.join(' '), async () => {
      const [cli, http] = await Promise.all([runEstate([...args, '--json', '--data-dir', dir]), server.get(route)]);
      assert.equal(cli.code, 0, cli.stderr);
      assert.deepEqual(cli.json, http.json);
      assert.ok(http.json.count > 0);
    });
  }
  const table = await runEstate(['work', 'feed', '--limit', '2', '--data-dir', dir]);
  assert.equal(table.code, 0);
  assert.match(table.stdout, /completed_at.*board.*task_id.*assignee.*title/);
  const bad = await runEstate(['work', 'feed', '--limit', '0', '--data-dir', dir]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^estate: invalid --limit: Input should be greater than or equal to 1\n$/);
});
