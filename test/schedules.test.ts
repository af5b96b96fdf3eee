import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { parseExposition, valueOf } from './helpers/exposition.ts';
import { newKey, startServer } from './helpers/server.ts';
import { waitUntil } from './helpers/wait-until.ts';

// Schedules (DESIGN.md 7c), black-box: check-ins are real completions
// recorded through the CLI and over HTTP; states read back through
// `estate schedules`, GET /schedules, /events and /metrics.

async function withSchedules(t: Parameters<typeof tempDataDir>[0], schedules: unknown[]): Promise<string> {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ schedules }));
  return dir;
}

const complete = (dir: string, taskId: string, board = 'ops') =>
  runEstate(['work', 'complete', '--board', board, '--task-id', taskId, '--assignee', 'cron', '--title', `run ${taskId}`, '--data-dir', dir]);

async function scheduleOf(dir: string, name: string) {
  const r = await runEstate(['schedules', '--json', '--data-dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  return (r.json.items as { name: string; state: string; last_task_id: string | null; next_due_at: string | null }[]).find((s) => s.name === name);
}

test('a schedule checked in through the CLI goes up, late and down as time passes, and up again at the next check-in; /events says so', async (t) => {
  // A fast schedule, so that the test sees it miss its time: due 4 s after a check-in, down 2 s later.
  const dir = await withSchedules(t, [{ name: 'quick', board: 'ops', match: { task_id: 'backup-*' }, every: '4s', grace: '2s' }]);
  assert.equal((await scheduleOf(dir, 'quick'))?.state, 'new');

  const first = await complete(dir, 'backup-1');
  assert.equal(first.code, 0, first.stderr);
  const up = await scheduleOf(dir, 'quick');
  assert.ok(up?.state === 'up' || up?.state === 'late', JSON.stringify(up));
  assert.equal(up?.last_task_id, 'backup-1');

  // A completion of another task, or of another board, is no check-in.
  assert.equal((await complete(dir, 'cleanup-1')).code, 0);
  assert.equal((await complete(dir, 'backup-9', 'garden')).code, 0);
  await waitUntil('the schedule down', async () => (await scheduleOf(dir, 'quick'))?.state === 'down');
  assert.equal((await scheduleOf(dir, 'quick'))?.last_task_id, 'backup-1');

  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const events = async () => ((await server.get('/events?limit=100', { 'X-API-Key': key })).json.items as { kind: string; source: string; subject: string }[]).filter((e) => e.source === 'schedule');
  assert.deepEqual((await events()).map((e) => e.kind), ['schedule_down', 'schedule_late']);

  const second = await server.request('POST', '/work/complete', { headers: { 'X-API-Key': key }, body: { board: 'ops', task_id: 'backup-2', assignee: 'cron', title: 'run 2' } });
  assert.equal(second.status, 201, second.text);
  const listed = await server.get('/schedules', { 'X-API-Key': key });
  assert.equal(listed.status, 200);
  assert.equal(listed.json.items[0].last_task_id, 'backup-2');
  const kinds = (await events()).map((e) => e.kind);
  assert.ok(kinds.includes('schedule_recovered'), JSON.stringify(kinds));
  assert.deepEqual(kinds.slice(-3), ['schedule_recovered', 'schedule_down', 'schedule_late'], 'recovered after the down spell (newest first)');
});

/** The first instant after `ms` at which Berlin's clocks show 03:00:00: found by asking Intl, not croner. */
function nextThreeAmInBerlin(ms: number): number {
  const wall = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });
  const candidates: number[] = [];
  const day = new Date(ms);
  for (let d = 0; d <= 2; d++) {
    for (const offsetH of [1, 2]) {
      const t = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate() + d, 3 - offsetH);
      if (t > ms && wall.format(t) === '03:00:00') candidates.push(t);
    }
  }
  return Math.min(...candidates);
}

test('GET /schedules: a cron schedule in its time zone is due at the next 03:00 there after a check-in over HTTP; /metrics has every state', async (t) => {
  const dir = await withSchedules(t, [
    { name: 'nightly-report', board: 'ops', match: { task_id: 'report-*' }, cron: '0 3 * * *', tz: 'Europe/Berlin', grace: '1h' },
    { name: 'weekly', board: 'ops', match: { task_id: 'weekly-?' }, every: '7d', grace: '1d' },
  ]);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const before = await server.get('/schedules', { 'X-API-Key': key });
  assert.equal(before.status, 200);
  assert.deepEqual(
    before.json.items.map((s: { name: string; state: string; tz: string | null; next_due_at: string | null }) => [s.name, s.state, s.tz, s.next_due_at]),
    [
      ['nightly-report', 'new', 'Europe/Berlin', null],
      ['weekly', 'new', null, null],
    ],
  );
  const done = await server.request('POST', '/work/complete', { headers: { 'X-API-Key': key }, body: { board: 'ops', task_id: 'report-2026-12-07', assignee: 'cron', title: 'report' } });
  assert.equal(done.status, 201);
  const after = (await server.get('/schedules', { 'X-API-Key': key })).json.items[0];
  assert.equal(after.state, 'up');
  assert.equal(after.last_checkin_at, done.json.completed_at);
  assert.equal(after.next_due_at, new Date(nextThreeAmInBerlin(Date.parse(done.json.completed_at))).toISOString());
  assert.equal(Date.parse(after.down_at) - Date.parse(after.next_due_at), 3_600_000);

  const samples = parseExposition((await server.get('/metrics', { 'X-API-Key': key })).text);
  assert.equal(valueOf(samples, 'estate_schedule_state', { schedule: 'nightly-report', state: 'up' }), 1);
  assert.equal(valueOf(samples, 'estate_schedule_state', { schedule: 'nightly-report', state: 'down' }), 0);
  assert.equal(valueOf(samples, 'estate_schedule_state', { schedule: 'weekly', state: 'new' }), 1);
  assert.ok((valueOf(samples, 'estate_schedule_last_checkin_seconds', { schedule: 'nightly-report' }) as number) >= 0);
  assert.equal(valueOf(samples, 'estate_schedule_last_checkin_seconds', { schedule: 'weekly' }), undefined);

  const anonymous = await server.get('/schedules');
  assert.equal(anonymous.status, 403);
});

test('a bad schedule in the config is exit 2 naming each problem and its place; nothing is read', async (t) => {
  const cases: [unknown, RegExp][] = [
    [{ name: 'a', board: 'ops', match: { task_id: '*' }, cron: '61 * * * *', grace: '1h' }, /schedules\.0\.cron: not a cron pattern/],
    [{ name: 'a', board: 'ops', match: { task_id: '*' }, cron: '0 3 * * *', tz: 'Mars/Olympus', grace: '1h' }, /schedules\.0\.tz: not an IANA time zone: "Mars\/Olympus"/],
    [{ name: 'a', board: 'ops', match: { task_id: '*' }, every: '1d', cron: '0 3 * * *', grace: '1h' }, /schedules\.0: give exactly one of "every" and "cron"/],
    [{ name: 'a', board: 'ops', match: { task_id: '*' }, grace: '1h' }, /schedules\.0: give exactly one of "every" and "cron"/],
    [{ name: 'a', board: 'ops', match: { task_id: '*' }, every: '1d', tz: 'UTC', grace: '1h' }, /schedules\.0\.tz: "tz" goes with "cron"/],
    [{ name: 'a', board: 'ops', match: { task_id: '*' }, every: 'daily', grace: '1h' }, /schedules\.0\.every: a whole number and a unit/],
    [{ name: 'A b', board: 'ops', match: { task_id: '*' }, every: '1d', grace: '1h' }, /schedules\.0\.name/],
  ];
  for (const [schedule, message] of cases) {
    const dir = await withSchedules(t, [schedule]);
    const r = await runEstate(['schedules', '--data-dir', dir]);
    assert.equal(r.code, 2, `${JSON.stringify(schedule)}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split('\n').length, 1, 'one line');
    assert.equal(r.stdout, '');
  }
  const twice = await withSchedules(t, [
    { name: 'a', board: 'ops', match: { task_id: '*' }, every: '1d', grace: '1h' },
    { name: 'a', board: 'ops', match: { task_id: 'b' }, every: '1d', grace: '1h' },
  ]);
  const r = await runEstate(['schedules', '--data-dir', twice]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /schedules\.1\.name: duplicate schedule name "a"/);
});
