import { elapsedText } from '../elapsed-text.ts';
import type { Schedule } from './schedule-spec.ts';

// Where a schedule stands (the Healthchecks.io model, DESIGN.md 7c): after a
// check-in the next is due (`every` later, or at the cron's next tick in
// its time zone); past that it is late, and past the grace too it is down.
// Pure: the check-ins and the time are given.

export type ScheduleState = 'new' | 'up' | 'late' | 'down';

export interface CheckIn {
  /** When the matching completion was recorded (its `completed_at`), ms since the epoch. */
  ms: number;
  taskId: string;
}

export interface ScheduleStatus {
  /** `new` before the first check-in. */
  state: ScheduleState;
  last: CheckIn | undefined;
  /** When the next check-in is due; undefined before the first or when a cron has no later tick. */
  dueMs: number | undefined;
  /** When it is down without one: due plus grace. */
  downMs: number | undefined;
}

/** Where `schedule` stands at `nowMs`, given its newest check-in. */
export function scheduleStatus(schedule: Schedule, last: CheckIn | undefined, nowMs: number): ScheduleStatus {
  if (!last) return { state: 'new', last, dueMs: undefined, downMs: undefined };
  const dueMs = schedule.dueAfter(last.ms);
  if (dueMs === undefined) return { state: 'up', last, dueMs, downMs: undefined };
  const downMs = dueMs + schedule.graceMs;
  const state = nowMs <= dueMs ? 'up' : nowMs <= downMs ? 'late' : 'down';
  return { state, last, dueMs, downMs };
}

export interface ScheduleEvent {
  ts: string;
  kind: 'schedule_late' | 'schedule_down' | 'schedule_recovered';
  subject: string;
  message: string;
}

/**
 * The state changes of `schedule` that its check-ins (oldest first) and the
 * time `nowMs` show: after each check-in, `schedule_late` at its due time
 * and `schedule_down` at due plus grace when the next check-in (or now) is
 * later, and `schedule_recovered` at the check-in that ends a down spell.
 * The same check-ins give the same events, so readers and restarts agree.
 */
export function scheduleEvents(schedule: Schedule, checkIns: readonly CheckIn[], nowMs: number): ScheduleEvent[] {
  const name = schedule.config.name;
  const events: ScheduleEvent[] = [];
  for (let i = 0; i < checkIns.length; i++) {
    const last = checkIns[i] as CheckIn;
    const next = checkIns[i + 1];
    const until = next?.ms ?? nowMs;
    const dueMs = schedule.dueAfter(last.ms);
    if (dueMs === undefined || until <= dueMs) continue;
    const since = `no check-in since ${new Date(last.ms).toISOString()} (${last.taskId})`;
    events.push({ ts: iso(dueMs), kind: 'schedule_late', subject: name, message: `${name} is late: ${since}, due ${iso(dueMs)}` });
    const downMs = dueMs + schedule.graceMs;
    if (until <= downMs) continue;
    events.push({ ts: iso(downMs), kind: 'schedule_down', subject: name, message: `${name} is down: ${since}, due ${iso(dueMs)}, grace ${elapsedText(schedule.graceMs)}` });
    if (next) {
      events.push({ ts: iso(next.ms), kind: 'schedule_recovered', subject: name, message: `${name} is up again: ${next.taskId} checked in after ${elapsedText(next.ms - downMs)} down` });
    }
  }
  return events;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
