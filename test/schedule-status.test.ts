import assert from 'node:assert/strict';
import { test } from 'node:test';
import { globTest, readSchedule } from '../src/core/schedules/schedule-spec.ts';
import { type CheckIn, scheduleEvents, scheduleStatus } from '../src/core/schedules/schedule-status.ts';

// Schedules (DESIGN.md 7c) with the clock given: every/cron due times, the
// late and down edges, cron in a time zone across DST changes, and the
// events the check-ins show.

const at = (iso: string) => Date.parse(iso);
const checkIn = (iso: string, taskId = 'backup-x'): CheckIn => ({ ms: at(iso), taskId });
const hourly = readSchedule({ name: 'hourly', board: 'ops', match: { task_id: 'backup-*' }, every: '1h', grace: '10m' });

test('an every schedule: new before a check-in, up until due, late within the grace, down after it', () => {
  assert.equal(scheduleStatus(hourly, undefined, at('2026-12-01T00:00:00Z')).state, 'new');
  const last = checkIn('2026-12-01T10:00:00Z');
  const status = (iso: string) => scheduleStatus(hourly, last, at(iso));
  assert.equal(status('2026-12-01T10:59:59Z').state, 'up');
  assert.equal(status('2026-12-01T11:00:00Z').state, 'up', 'due at 11:00 exactly is still on time');
  assert.equal(status('2026-12-01T11:00:01Z').state, 'late');
  assert.equal(status('2026-12-01T11:10:00Z').state, 'late', 'the last instant of the grace');
  assert.equal(status('2026-12-01T11:10:01Z').state, 'down');
  assert.equal(status('2026-12-01T11:10:01Z').dueMs, at('2026-12-01T11:00:00Z'));
  assert.equal(status('2026-12-01T11:10:01Z').downMs, at('2026-12-01T11:10:00Z'));
});

test('a cron schedule is due at the next tick in its time zone, and keeps the wall-clock time across DST', () => {
  const nightly = readSchedule({ name: 'nightly', board: 'ops', match: { task_id: '*' }, cron: '0 3 * * *', tz: 'Europe/Berlin', grace: '1h' });
  // Winter (UTC+1): 03:00 Berlin is 02:00Z.
  assert.equal(nightly.dueAfter(at('2026-01-10T02:05:00Z')), at('2026-01-11T02:00:00Z'));
  // The night of 29 March 2026 skips 02:00-03:00; 03:00 CEST (UTC+2) is 01:00Z.
  assert.equal(nightly.dueAfter(at('2026-03-28T02:05:00Z')), at('2026-03-29T01:00:00Z'));
  // The night of 25 October 2026 repeats 02:00-03:00; 03:00 CET is 02:00Z.
  assert.equal(nightly.dueAfter(at('2026-10-24T01:05:00Z')), at('2026-10-25T02:00:00Z'));
  // A tick in the skipped hour runs right after it (Vixie cron); one in the repeated hour runs once.
  const at0230 = readSchedule({ name: 'n', board: 'ops', match: { task_id: '*' }, cron: '30 2 * * *', tz: 'Europe/Berlin', grace: '1h' });
  assert.equal(at0230.dueAfter(at('2026-03-28T12:00:00Z')), at('2026-03-29T01:00:00Z'), '03:00 CEST, just after the gap');
  assert.equal(at0230.dueAfter(at('2026-10-24T12:00:00Z')), at('2026-10-25T00:30:00Z'), 'the first 02:30, CEST');
  assert.equal(at0230.dueAfter(at('2026-10-25T00:31:00Z')), at('2026-10-26T01:30:00Z'), 'not again at 02:30 CET the same night');
  // UTC by default.
  const utc = readSchedule({ name: 'u', board: 'ops', match: { task_id: '*' }, cron: '0 3 * * *', grace: '1h' });
  assert.equal(utc.dueAfter(at('2026-03-28T02:05:00Z')), at('2026-03-28T03:00:00Z'));

  const last = checkIn('2026-03-28T02:01:00Z');
  assert.equal(scheduleStatus(nightly, last, at('2026-03-29T00:59:00Z')).state, 'up');
  assert.equal(scheduleStatus(nightly, last, at('2026-03-29T01:30:00Z')).state, 'late');
  assert.equal(scheduleStatus(nightly, last, at('2026-03-29T02:00:01Z')).state, 'down');
});

test('events from the check-ins: late at the due time, down at due plus grace, recovered at the check-in that ends a down spell', () => {
  const checkIns = [checkIn('2026-12-01T10:00:00Z', 'backup-1'), checkIn('2026-12-01T11:05:00Z', 'backup-2'), checkIn('2026-12-01T14:00:00Z', 'backup-3')];
  const events = scheduleEvents(hourly, checkIns, at('2026-12-01T15:30:00Z'));
  assert.deepEqual(
    events.map((e) => [e.kind, e.ts]),
    [
      // backup-2 came late (11:05, within the grace): late, not down.
      ['schedule_late', '2026-12-01T11:00:00.000Z'],
      // Then nothing until 14:00: late at 12:05, down at 12:15, up again at 14:00.
      ['schedule_late', '2026-12-01T12:05:00.000Z'],
      ['schedule_down', '2026-12-01T12:15:00.000Z'],
      ['schedule_recovered', '2026-12-01T14:00:00.000Z'],
      // And now, 15:30, down again since 15:10.
      ['schedule_late', '2026-12-01T15:00:00.000Z'],
      ['schedule_down', '2026-12-01T15:10:00.000Z'],
    ],
  );
  assert.match(events[3]?.message as string, /hourly is up again: backup-3 checked in after 1h 45m down/);
  assert.match(events[2]?.message as string, /hourly is down: no check-in since 2026-12-01T11:05:00.000Z \(backup-2\)/);
  assert.deepEqual(scheduleEvents(hourly, checkIns, at('2026-12-01T15:30:00Z')), events, 'the same check-ins, the same events');
  assert.deepEqual(scheduleEvents(hourly, [], at('2026-12-01T15:30:00Z')), [], 'no check-in yet: no event');
});

test('a task_id glob: * any run, ? any one character, everything else itself', () => {
  const test1 = globTest('backup-*');
  assert.ok(test1('backup-2026-11-27') && test1('backup-'));
  assert.ok(!test1('nightly-backup-1') && !test1('Backup-1'));
  const test2 = globTest('db.?');
  assert.ok(test2('db.1') && !test2('db.12') && !test2('dbx1'));
  assert.ok(globTest('a+b(c)')('a+b(c)'), 'regex characters are themselves');
});

test('a bad duration, cron pattern or time zone is refused when the schedule is read', () => {
  assert.throws(() => readSchedule({ name: 'x', board: 'ops', match: { task_id: '*' }, every: '1 day', grace: '1h' }), /every/);
  assert.throws(() => readSchedule({ name: 'x', board: 'ops', match: { task_id: '*' }, cron: '61 * * * *', grace: '1h' }), /minute/);
  assert.throws(() => readSchedule({ name: 'x', board: 'ops', match: { task_id: '*' }, cron: '0 3 * * *', tz: 'Mars/Olympus', grace: '1h' }), /timezone/i);
  assert.throws(() => readSchedule({ name: 'x', board: 'ops', match: { task_id: '*' }, cron: '0 0 30 2 *', grace: '1h' }), /has no next run/);
});

// Runs with a start (DESIGN.md 7c): max_runtime and min_runtime.
const timed = readSchedule({ name: 'backup', board: 'ops', match: { task_id: 'backup-*' }, every: '1d', grace: '1h', min_runtime: '1m', max_runtime: '2h' });
const run = (startIso: string, endIso: string, taskId: string): CheckIn => ({ ms: at(endIso), taskId, startedMs: at(startIso) });

test('a run started and not completed within max_runtime makes the schedule down at the overrun; its completion brings it up', () => {
  // Due daily at 03:20 after backup-1; backup-2 starts early, at 00:30, so it passes max_runtime (2h) at 02:30, before it is due.
  const last = run('2026-12-01T03:00:00Z', '2026-12-01T03:20:00Z', 'backup-1');
  const open = [{ startedMs: at('2026-12-02T00:30:00Z'), taskId: 'backup-2' }];
  assert.equal(scheduleStatus(timed, last, at('2026-12-02T02:29:59Z'), open).state, 'up', 'running, within max_runtime');
  const over = scheduleStatus(timed, last, at('2026-12-02T02:30:01Z'), open);
  assert.deepEqual([over.state, over.downMs], ['down', at('2026-12-02T02:30:00Z')]);
  assert.deepEqual(
    scheduleEvents(timed, [last], at('2026-12-02T02:45:00Z'), open).map((e) => [e.kind, e.ts, e.message]),
    [['schedule_down', '2026-12-02T02:30:00.000Z', 'backup is down: backup-2, started 2026-12-02T00:30:00.000Z, has run longer than its max_runtime 2h 0m']],
  );
  // It completes at 03:00: down at 02:30 and up again at 03:00, once each.
  const done = run('2026-12-02T00:30:00Z', '2026-12-02T03:00:00Z', 'backup-2');
  assert.equal(scheduleStatus(timed, done, at('2026-12-02T04:00:00Z')).state, 'up');
  assert.deepEqual(
    scheduleEvents(timed, [last, done], at('2026-12-02T04:00:00Z')).map((e) => [e.kind, e.ts]),
    [
      ['schedule_down', '2026-12-02T02:30:00.000Z'],
      ['schedule_recovered', '2026-12-02T03:00:00.000Z'],
    ],
  );
  // A start is no check-in: the same run started on time at 03:00 and still running at 04:21 leaves the schedule down by lateness.
  assert.equal(scheduleStatus(timed, last, at('2026-12-02T04:21:00Z'), [{ startedMs: at('2026-12-02T03:00:00Z'), taskId: 'backup-2' }]).state, 'down');
  // Without a start a completion is a plain check-in: no runtime.
  assert.deepEqual(scheduleEvents(timed, [checkIn('2026-12-01T03:00:00Z', 'backup-1'), checkIn('2026-12-02T02:00:00Z', 'backup-2')], at('2026-12-02T03:00:00Z')), []);
});

test('a run completed faster than min_runtime is schedule_too_fast at its completion; one just at it is not', () => {
  const events = scheduleEvents(
    timed,
    [run('2026-12-01T03:00:00Z', '2026-12-01T03:00:04.250Z', 'backup-1'), run('2026-12-02T02:59:00Z', '2026-12-02T03:00:00Z', 'backup-2')],
    at('2026-12-02T04:00:00Z'),
  );
  assert.deepEqual(
    events.map((e) => [e.kind, e.ts, e.message]),
    [['schedule_too_fast', '2026-12-01T03:00:04.250Z', 'backup ran too fast: backup-1 completed in 4.25s, under its min_runtime 1m']],
  );
});

test('a run that overruns while the schedule is overdue too is one down spell and one recovery', () => {
  // backup-1 checks in at 03:20 on day 1; backup-2 starts at 03:00 on day 2, hangs past 05:00 (max_runtime),
  // and the schedule is also down by lateness from 04:20 (due 03:20 + 1h grace) until backup-2 completes at 09:00.
  const last = run('2026-12-01T03:00:00Z', '2026-12-01T03:20:00Z', 'backup-1');
  const done = run('2026-12-02T03:00:00Z', '2026-12-02T09:00:00Z', 'backup-2');
  assert.deepEqual(
    scheduleEvents(timed, [last, done], at('2026-12-02T10:00:00Z')).map((e) => [e.kind, e.ts]),
    [
      ['schedule_late', '2026-12-02T03:20:00.000Z'],
      ['schedule_down', '2026-12-02T04:20:00.000Z'],
      ['schedule_recovered', '2026-12-02T09:00:00.000Z'],
    ],
  );
  // While it still runs, the state is down from the earlier of the two.
  const open = [{ startedMs: at('2026-12-02T03:00:00Z'), taskId: 'backup-2' }];
  const status = scheduleStatus(timed, last, at('2026-12-02T06:00:00Z'), open);
  assert.deepEqual([status.state, status.downMs], ['down', at('2026-12-02T04:20:00Z')]);
});
