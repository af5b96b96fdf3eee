import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { BIN, runEstate, startEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { sendJson, startFake } from './helpers/fake-upstreams.ts';
import { startPostgres } from './helpers/postgres.ts';
import { newKey, startServer } from './helpers/server.ts';

// `estate work feed --follow` keeps one order, oldest at the top and new
// completions appended below, each once, even one recorded between the feed
// and the follow; with --json it prints NDJSON only, with -o tsv rows under
// one header.

async function dirWithThree(t: Parameters<typeof tempDataDir>[0]): Promise<string> {
  const dir = await tempDataDir(t);
  const start = Date.parse('2026-11-01T00:00:00Z');
  const lines = [0, 1, 2].map((i) =>
    JSON.stringify({ id: `wc_${String(i).padStart(16, '0')}`, task_id: `T-${i}`, board: 'ops', assignee: 'builder', title: `Task ${i}`, completed_at: new Date(start + i * 60_000).toISOString() }),
  );
  await writeFile(path.join(dir, 'work', 'completions.jsonl'), lines.map((l) => `${l}\n`).join(''));
  return dir;
}

const NEW = ['work', 'complete', '--task-id', 'T-new', '--board', 'ops', '--assignee', 'cron', '--title', 'Task new'];

test('work feed --follow, locally: the feed oldest first, then the new completion below it', async (t) => {
  const dir = await dirWithThree(t);
  const follow = startEstate(t, ['work', 'feed', '--follow', '--data-dir', dir]);
  await follow.waitForStdout('the feed', (out) => out.split('\n').length === 4);
  const added = await runEstate([...NEW, '--data-dir', dir]);
  assert.equal(added.code, 0, added.stderr);
  await follow.waitForStdout('the new completion', (out) => out.includes('T-new'));
  const stopped = await follow.stop('SIGINT');
  assert.equal(stopped.code, 0, stopped.stderr);
  const lines = stopped.stdout.trimEnd().split('\n');
  assert.deepEqual(
    lines.map((l) => /ops\/(T-\S+)/.exec(l)?.[1]),
    ['T-0', 'T-1', 'T-2', 'T-new'],
    stopped.stdout,
  );
  assert.match(lines[0] as string, /^2026-11-01T00:00:00\.000Z {2}ops\/T-0 {2}builder {2}Task 0$/);
});

for (const mode of ['local', 'remote'] as const) {
  test(`work feed --follow --json, ${mode}: NDJSON only, oldest first, the new completion last`, async (t) => {
    const dir = await dirWithThree(t);
    const key = await newKey(dir, 'cron');
    const server = mode === 'remote' ? await startServer(t, dir) : undefined;
    const where = server ? ['--url', server.url, '--api-key', key] : ['--data-dir', dir];
    const follow = startEstate(t, ['work', 'feed', '--follow', '--json', ...where]);
    await follow.waitForStdout('the feed', (out) => out.split('\n').length === 4);
    const added = await runEstate([...NEW, ...where]);
    assert.equal(added.code, 0, added.stderr);
    await follow.waitForStdout('the new completion', (out) => out.includes('T-new'));
    const stopped = await follow.stop();
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.ok(stopped.stdout.endsWith('\n'));
    const records = stopped.stdout.trimEnd().split('\n').map((line) => JSON.parse(line));
    assert.deepEqual(
      records.map((r) => r.task_id),
      ['T-0', 'T-1', 'T-2', 'T-new'],
    );
    assert.ok(records.every((r) => typeof r.id === 'string' && typeof r.completed_at === 'string'));
  });
}

const RUN_BEFORE_OUTPUT = path.join(import.meta.dirname, 'helpers', 'run-before-output-preload.mjs');

test('work feed --follow with the PostgreSQL store: a completion recorded right after the feed is read is printed, once, after the feed', async (t) => {
  const pg = await startPostgres(t);
  if (!pg) return t.skip('PostgreSQL is not installed (apt-get install postgresql)');
  const dir = await tempDataDir(t);
  const on = ['--store', pg.url, '--data-dir', dir];
  const complete = (id: string) => ['work', 'complete', '--task-id', id, '--board', 'ops', '--assignee', 'cron', '--title', `Task ${id}`, ...on];
  const migrated = await runEstate(['migrate', ...on]);
  assert.equal(migrated.code, 0, migrated.stderr);
  assert.equal((await runEstate(complete('T-first'))).code, 0);
  // The follower records T-between itself, blocked, as it prints the feed: after the read, before anything that follows.
  const follow = startEstate(t, ['work', 'feed', '--follow', '--json', ...on], {
    env: { NODE_OPTIONS: `--import=${RUN_BEFORE_OUTPUT}`, ESTATE_TEST_RUN_BEFORE_OUTPUT: JSON.stringify([process.execPath, BIN, ...complete('T-between')]) },
  });
  await follow.waitForStdout('the completion recorded between the feed and the follow', (out) => out.includes('"T-between"'));
  const added = await runEstate(complete('T-after'));
  assert.equal(added.code, 0, added.stderr);
  await follow.waitForStdout('the completion recorded after', (out) => out.includes('"T-after"'));
  const stopped = await follow.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.deepEqual(
    stopped.stdout.trimEnd().split('\n').map((line) => JSON.parse(line).task_id),
    ['T-first', 'T-between', 'T-after'],
  );
});

test('work feed --follow output formats: -o tsv is one header then a row per completion, -o json is NDJSON; -o yaml and -o csv are usage errors', async (t) => {
  for (const [format, extra] of [['tsv', []], ['tsv', ['--no-headers']], ['json', []]] as const) {
    await t.test(`-o ${format} ${extra.join(' ')}`, async (st) => {
      const dir = await dirWithThree(st);
      const follow = startEstate(st, ['work', 'feed', '--follow', '-o', format, ...extra, '--data-dir', dir]);
      const expectedLines = extra.length ? 3 : format === 'tsv' ? 4 : 3;
      await follow.waitForStdout('the feed', (out) => out.split('\n').length === expectedLines + 1);
      const added = await runEstate([...NEW, '--data-dir', dir]);
      assert.equal(added.code, 0, added.stderr);
      await follow.waitForStdout('the new completion', (out) => out.includes('T-new'));
      const stopped = await follow.stop('SIGINT');
      assert.equal(stopped.code, 0, stopped.stderr);
      const lines = stopped.stdout.trimEnd().split('\n');
      if (format === 'json') {
        assert.deepEqual(lines.map((l) => JSON.parse(l).task_id), ['T-0', 'T-1', 'T-2', 'T-new']);
        return;
      }
      const rows = extra.length ? lines : lines.slice(1);
      if (!extra.length) assert.equal(lines[0], 'completed_at\tboard\ttask_id\tassignee\ttitle');
      assert.equal(rows[0], '2026-11-01T00:00:00.000Z\tops\tT-0\tbuilder\tTask 0');
      assert.deepEqual(rows.map((l) => l.split('\t')[2]), ['T-0', 'T-1', 'T-2', 'T-new']);
      assert.ok(rows.every((l) => l.split('\t').length === 5), stopped.stdout);
    });
  }
  const dir = await dirWithThree(t);
  for (const format of ['yaml', 'csv']) {
    const r = await runEstate(['work', 'feed', '--follow', '-o', format, '--data-dir', dir]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, `estate: --follow prints one line per completion and cannot do -o ${format}: use --json (one object per line), -o tsv or the default lines\n`);
  }
});

test('work feed --follow --url with a refused API key exits 4, whether the feed or its stream refuses it', async (t) => {
  const dir = await dirWithThree(t);
  const server = await startServer(t, dir);
  const wrong = 'est_000000000000_notakeynotakeynotakey';
  // The real server's answers: its feed (public), and its refusal of an unknown key (on a protected route).
  const feed = await (await fetch(`${server.url}/work/feed`)).text();
  const refused = await fetch(`${server.url}/events`, { headers: { 'X-API-Key': wrong } });
  assert.equal(refused.status, 403);
  const refusal = await refused.json();
  for (const [name, refuses] of [
    ['the feed', (p: string) => p === '/work/feed'],
    ['the stream', (p: string) => p === '/work/stream'],
  ] as const) {
    await t.test(`${name} refuses the key`, async (st) => {
      const fake = await startFake(st, (_req, res, seen) => {
        if (refuses(seen.path)) sendJson(res, 403, refusal);
        else if (seen.path === '/work/feed') res.writeHead(200, { 'Content-Type': 'application/json' }).end(feed);
        else sendJson(res, 404, { detail: 'not found' });
      });
      const r = await runEstate(['work', 'feed', '--follow', '--json', '--url', fake.url, '--api-key', wrong]);
      assert.equal(r.code, 4, r.stderr);
      assert.match(r.stderr, /^estate: http:\/\/127\.0\.0\.1:\d+ refused the API key \(from --api-key\)[^\n]*\n$/);
      assert.ok(!r.stderr.includes(wrong), 'the key is never shown');
      assert.ok(fake.requests.some((q) => q.path === (name === 'the feed' ? '/work/feed' : '/work/stream')), 'the refusal came from the fake');
    });
  }
});
