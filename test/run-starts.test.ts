import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { createKey } from '../src/core/keys/key-store.ts';
import { runEstate } from './helpers/cli.ts';
import { parseExposition, valueOf } from './helpers/exposition.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';

// Runs with a start (DESIGN.md 7c), black-box: POST /work/start and
// `estate work start`, the completion that ends a run carrying its start
// and duration into the feed, and the schedules' max_runtime and
// min_runtime read back through GET /schedules and /events. The server's
// clock is given, so a run overruns without the test waiting for it.

const T0 = Date.parse('2026-12-01T03:00:00Z');

/** A clock the test moves: `now()` for the server, `advance(ms)` for the test. */
function testClock(start = T0) {
  let ms = start;
  return { now: () => new Date(ms), advance: (by: number) => (ms += by) };
}

const body = (taskId: string, extra: Record<string, unknown> = {}) => ({ board: 'ops', task_id: taskId, ...extra });
const completion = (taskId: string) => ({ board: 'ops', task_id: taskId, assignee: 'cron', title: `run ${taskId}` });

test('POST /work/start: 201 with the start, 200 for the same again, 409 for other fields or after the completion; the completion carries started_at and duration_s into the feed', async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir);
  const clock = testClock();
  const server = await startServer(t, dir, { now: clock.now });
  const post = (route: string, b: object, k = key) => server.request('POST', route, { headers: { 'X-API-Key': k }, body: b });

  const started = await post('/work/start', body('backup-1', { assignee: 'cron@db1' }));
  assert.equal(started.status, 201, started.text);
  assert.match(started.json.id, /^ws_[0-9a-f]{16}$/);
  assert.deepEqual({ ...started.json, id: undefined }, { id: undefined, task_id: 'backup-1', board: 'ops', assignee: 'cron@db1', started_at: '2026-12-01T03:00:00.000Z' });

  clock.advance(5_000);
  const again = await post('/work/start', body('backup-1', { assignee: 'cron@db1' }));
  assert.equal(again.status, 200);
  assert.deepEqual(again.json, started.json, 'the stored start, not a new one');
  const other = await post('/work/start', body('backup-1', { assignee: 'someone-else' }));
  assert.equal(other.status, 409);
  assert.match(other.json.detail, /^run ops\/backup-1 was already started \(ws_[0-9a-f]{16} at 2026-12-01T03:00:00\.000Z\) with a different assignee$/);

  clock.advance(88_417);
  const done = await post('/work/complete', completion('backup-1'));
  assert.equal(done.status, 201, done.text);
  assert.equal(done.json.started_at, '2026-12-01T03:00:00.000Z');
  assert.equal(done.json.duration_s, 93.417);
  // A completion without a start carries neither.
  const plain = await post('/work/complete', completion('cleanup-1'));
  assert.equal(plain.status, 201);
  assert.equal('started_at' in plain.json || 'duration_s' in plain.json, false);

  const feed = await server.get('/work/feed?board=ops');
  assert.deepEqual(
    feed.json.items.map((i: Record<string, unknown>) => [i.task_id, i.started_at, i.duration_s]),
    [
      ['cleanup-1', undefined, undefined],
      ['backup-1', '2026-12-01T03:00:00.000Z', 93.417],
    ],
  );
  // Once completed, the run cannot start again: not even with the same fields.
  const late = await post('/work/start', body('backup-1', { assignee: 'cron@db1' }));
  assert.equal(late.status, 409);
  assert.match(late.json.detail, /^run ops\/backup-1 has completed already \(wc_[0-9a-f]{16} at 2026-12-01T03:01:33\.417Z\)/);

  // Bad input is a 422 naming the field; a read-only key is refused; nothing of either is stored.
  const bad = await post('/work/start', { board: 'Not A Slug', task_id: 'x' });
  assert.equal(bad.status, 422);
  assert.deepEqual(bad.json.detail.map((d: { loc: string[] }) => d.loc), [['body', 'board']]);
  const reader = (await createKey(dir, { userId: 'viewer', scopes: ['read'] })).key;
  assert.equal((await post('/work/start', body('backup-2'), reader)).status, 403);
  assert.equal((await server.request('POST', '/work/start', { body: body('backup-2') })).status, 403, 'no credential');
  const lines = (await readFile(path.join(dir, 'work', 'starts.jsonl'), 'utf8')).trim().split('\n');
  assert.deepEqual(lines.map((l) => JSON.parse(l).task_id), ['backup-1']);
});

test('estate work start: the start on stdout, exit 5 with one line for a conflicting one; remote and local alike', async (t) => {
  const dir = await tempDataDir(t);
  const start = (extra: string[]) => runEstate(['work', 'start', '--board', 'ops', '--task-id', 'report-7', ...extra]);
  const local = await start(['--assignee', 'cron', '--data-dir', dir, '--json']);
  assert.equal(local.code, 0, local.stderr);
  assert.equal(local.json.task_id, 'report-7');
  assert.equal((await start(['--assignee', 'cron', '--data-dir', dir])).code, 0, 'the same start again');
  const conflict = await start(['--assignee', 'other', '--data-dir', dir]);
  assert.equal(conflict.code, 5);
  assert.match(conflict.stderr, /^estate: run ops\/report-7 was already started \(ws_[0-9a-f]{16} at [^)]+\) with a different assignee\n$/);

  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const remote = await start(['--assignee', 'other', '--url', server.url, '--api-key', key]);
  assert.equal(remote.code, 5);
  assert.match(remote.stderr, /^estate: http:\/\/127\.0\.0\.1:\d+: run ops\/report-7 was already started/);
  const fresh = await runEstate(['work', 'start', '--board', 'ops', '--task-id', 'report-8', '--url', server.url, '--api-key', key, '--json']);
  assert.equal(fresh.code, 0, fresh.stderr);
  assert.equal(fresh.json.assignee, undefined);
});

test('a schedule with max_runtime is down while a started run overruns it and up at its completion; min_runtime flags a run that was too fast', async (t) => {
  const dir = await tempDataDir(t);
  await writeFile(
    path.join(dir, 'estate.config.json'),
    JSON.stringify({ schedules: [{ name: 'backup', board: 'ops', match: { task_id: 'backup-*' }, every: '1d', grace: '1h', min_runtime: '1m', max_runtime: '2h' }] }),
  );
  const key = await newKey(dir);
  const clock = testClock();
  const server = await startServer(t, dir, { now: clock.now });
  const headers = { 'X-API-Key': key };
  const post = (route: string, b: object) => server.request('POST', route, { headers, body: b });
  const schedule = async () => (await server.get('/schedules', headers)).json.items[0];
  const metric = async (name: string) => valueOf(parseExposition((await server.get('/metrics', headers)).text), name, { schedule: 'backup' });
  const events = async () => ((await server.get('/events?limit=100', headers)).json.items as { kind: string; ts: string; message: string; source: string }[]).filter((e) => e.source === 'schedule');

  // backup-1 runs for 10 s: a check-in, and too fast.
  assert.equal((await post('/work/start', body('backup-1'))).status, 201);
  clock.advance(10_000);
  assert.equal((await post('/work/complete', completion('backup-1'))).status, 201);
  const first = await schedule();
  assert.deepEqual([first.state, first.last_task_id, first.last_duration_s, first.running], ['up', 'backup-1', 10, []]);
  assert.deepEqual(
    (await events()).map((e) => [e.kind, e.message]),
    [['schedule_too_fast', 'backup ran too fast: backup-1 completed in 10s, under its min_runtime 1m']],
  );
  assert.deepEqual([await metric('estate_schedule_last_run_duration_seconds'), await metric('estate_schedule_runs_open')], [10, 0]);

  // backup-2 starts an hour later and is still running after 2 h: down since it passed max_runtime, naming it.
  clock.advance(3_600_000);
  assert.equal((await post('/work/start', body('backup-2'))).status, 201);
  clock.advance(2 * 3_600_000 - 1);
  assert.deepEqual([(await schedule()).state, (await schedule()).running.map((r: { task_id: string }) => r.task_id)], ['up', ['backup-2']]);
  assert.equal(await metric('estate_schedule_runs_open'), 1);
  clock.advance(2);
  const over = await schedule();
  assert.deepEqual([over.state, over.down_at], ['down', '2026-12-01T06:00:10.000Z']);
  assert.deepEqual((await events())[0], {
    ts: '2026-12-01T06:00:10.000Z',
    kind: 'schedule_down',
    source: 'schedule',
    subject: 'backup',
    message: 'backup is down: backup-2, started 2026-12-01T04:00:10.000Z, has run longer than its max_runtime 2h 0m',
  });

  // Its completion brings the schedule up again, once.
  clock.advance(30 * 60_000);
  const done = await post('/work/complete', completion('backup-2'));
  assert.equal(done.json.duration_s, 9000.001);
  const after = await schedule();
  assert.deepEqual([after.state, after.last_task_id, after.running], ['up', 'backup-2', []]);
  assert.deepEqual([await metric('estate_schedule_last_run_duration_seconds'), await metric('estate_schedule_runs_open')], [9000.001, 0]);
  assert.deepEqual(
    (await events()).map((e) => [e.kind, e.ts]),
    [
      ['schedule_recovered', '2026-12-01T06:30:10.001Z'],
      ['schedule_down', '2026-12-01T06:00:10.000Z'],
      ['schedule_too_fast', '2026-12-01T03:00:10.000Z'],
    ],
  );
});

test('a schedule whose min_runtime is not shorter than its max_runtime is refused at load, naming the field', async (t) => {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ schedules: [{ name: 'b', board: 'ops', match: { task_id: '*' }, every: '1d', grace: '1h', min_runtime: '2h', max_runtime: '2h' }] }));
  const r = await runEstate(['schedules', '--data-dir', dir]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /schedules\[0\]\.min_runtime|schedules\.0\.min_runtime/);
  assert.match(r.stderr, /"min_runtime" must be shorter than "max_runtime"/);
});
