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
  /** When its run started (the completion's `started_at`), for a run that had a start. */
  startedMs?: number | undefined;
}

/** A run of the schedule started and not completed (POST /work/start without its completion yet). */
export interface OpenRun {
  startedMs: number;
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

/**
 * Where `schedule` stands at `nowMs`, given its newest check-in and the runs
 * started and not completed: down (at the overrun) while one of them has run
 * longer than `max_runtime`, whatever the check-ins say.
 */
export function scheduleStatus(schedule: Schedule, last: CheckIn | undefined, nowMs: number, open: readonly OpenRun[] = []): ScheduleStatus {
  const overrunMs = firstOverrun(schedule, open, nowMs);
  if (!last) return overrunMs === undefined ? { state: 'new', last, dueMs: undefined, downMs: undefined } : { state: 'down', last, dueMs: undefined, downMs: overrunMs };
  const dueMs = schedule.dueAfter(last.ms);
  const downMs = dueMs === undefined ? undefined : dueMs + schedule.graceMs;
  if (overrunMs !== undefined && (downMs === undefined || nowMs <= downMs || overrunMs < downMs)) return { state: 'down', last, dueMs, downMs: overrunMs };
  if (dueMs === undefined || downMs === undefined) return { state: 'up', last, dueMs, downMs: undefined };
  const state = nowMs <= dueMs ? 'up' : nowMs <= downMs ? 'late' : 'down';
  return { state, last, dueMs, downMs };
}

/** When the first of the open runs passed `max_runtime`, if one has by `nowMs`. */
function firstOverrun(schedule: Schedule, open: readonly OpenRun[], nowMs: number): number | undefined {
  if (schedule.maxRuntimeMs === undefined) return undefined;
  let first: number | undefined;
  for (const run of open) {
    const at = run.startedMs + schedule.maxRuntimeMs;
    if (nowMs > at && (first === undefined || at < first)) first = at;
  }
  return first;
}

export interface ScheduleEvent {
  ts: string;
  kind: 'schedule_late' | 'schedule_down' | 'schedule_recovered' | 'schedule_too_fast';
  subject: string;
  message: string;
}

/** A stretch the schedule is down: from `fromMs` until a check-in at `untilMs` (undefined: down still). */
interface DownSpell {
  fromMs: number;
  untilMs: number | undefined;
  why: string;
  /** The check-in that ends it. */
  endedBy: CheckIn | undefined;
}

/**
 * The state changes of `schedule` that its check-ins (oldest first), its
 * runs started and not completed, and the time `nowMs` show:
 * - after each check-in, `schedule_late` at its due time and, past the
 *   grace, a down spell, when the next check-in (or now) is later;
 * - with `max_runtime`, a down spell from the moment a run passed it until
 *   its completion (DESIGN.md 7c);
 * - with `min_runtime`, `schedule_too_fast` at the completion of a run that
 *   took less.
 * Spells that overlap are one: `schedule_down` at its start, naming why, and
 * `schedule_recovered` at the check-in that ends it. The same check-ins and
 * runs give the same events, so readers and restarts agree.
 */
export function scheduleEvents(schedule: Schedule, checkIns: readonly CheckIn[], nowMs: number, open: readonly OpenRun[] = []): ScheduleEvent[] {
  const name = schedule.config.name;
  const events: ScheduleEvent[] = [];
  const spells: DownSpell[] = [];
  for (let i = 0; i < checkIns.length; i++) {
    const last = checkIns[i] as CheckIn;
    const next = checkIns[i + 1];
    ranFor(schedule, last, nowMs, events, spells);
    const until = next?.ms ?? nowMs;
    const dueMs = schedule.dueAfter(last.ms);
    if (dueMs === undefined || until <= dueMs) continue;
    const since = `no check-in since ${new Date(last.ms).toISOString()} (${last.taskId})`;
    events.push({ ts: iso(dueMs), kind: 'schedule_late', subject: name, message: `${name} is late: ${since}, due ${iso(dueMs)}` });
    const downMs = dueMs + schedule.graceMs;
    if (until <= downMs) continue;
    spells.push({ fromMs: downMs, untilMs: next?.ms, endedBy: next, why: `${since}, due ${iso(dueMs)}, grace ${elapsedText(schedule.graceMs)}` });
  }
  if (schedule.maxRuntimeMs !== undefined) {
    for (const run of open) {
      const overMs = run.startedMs + schedule.maxRuntimeMs;
      if (nowMs > overMs) spells.push({ fromMs: overMs, untilMs: undefined, endedBy: undefined, why: overrunText(schedule, run.taskId, run.startedMs) });
    }
  }
  for (const spell of mergeSpells(spells)) {
    events.push({ ts: iso(spell.fromMs), kind: 'schedule_down', subject: name, message: `${name} is down: ${spell.why}` });
    if (spell.untilMs !== undefined && spell.endedBy) {
      events.push({ ts: iso(spell.untilMs), kind: 'schedule_recovered', subject: name, message: `${name} is up again: ${spell.endedBy.taskId} checked in after ${elapsedText(spell.untilMs - spell.fromMs)} down` });
    }
  }
  return events.sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0));
}

/** What the run of `checkIn` adds (it had a start): `schedule_too_fast` under `min_runtime`, a down spell over `max_runtime`. */
function ranFor(schedule: Schedule, checkIn: CheckIn, nowMs: number, events: ScheduleEvent[], spells: DownSpell[]): void {
  if (checkIn.startedMs === undefined) return;
  const name = schedule.config.name;
  const tookMs = checkIn.ms - checkIn.startedMs;
  if (schedule.minRuntimeMs !== undefined && tookMs < schedule.minRuntimeMs) {
    events.push({
      ts: iso(checkIn.ms),
      kind: 'schedule_too_fast',
      subject: name,
      message: `${name} ran too fast: ${checkIn.taskId} completed in ${secondsText(tookMs)}, under its min_runtime ${elapsedText(schedule.minRuntimeMs)}`,
    });
  }
  if (schedule.maxRuntimeMs !== undefined && tookMs > schedule.maxRuntimeMs) {
    const overMs = checkIn.startedMs + schedule.maxRuntimeMs;
    if (overMs < nowMs) spells.push({ fromMs: overMs, untilMs: checkIn.ms, endedBy: checkIn, why: overrunText(schedule, checkIn.taskId, checkIn.startedMs) });
  }
}

function overrunText(schedule: Schedule, taskId: string, startedMs: number): string {
  return `${taskId}, started ${iso(startedMs)}, has run longer than its max_runtime ${elapsedText(schedule.maxRuntimeMs ?? 0)}`;
}

/** The spells, overlapping ones as one (from the first's start to the last end; still down when one of them is), in time order. */
function mergeSpells(spells: DownSpell[]): DownSpell[] {
  const sorted = [...spells].sort((a, b) => a.fromMs - b.fromMs);
  const merged: DownSpell[] = [];
  for (const spell of sorted) {
    const current = merged.at(-1);
    if (current && (current.untilMs === undefined || spell.fromMs <= current.untilMs)) {
      if (current.untilMs !== undefined && (spell.untilMs === undefined || spell.untilMs > current.untilMs)) {
        current.untilMs = spell.untilMs;
        current.endedBy = spell.endedBy;
      }
      continue;
    }
    merged.push({ ...spell });
  }
  return merged;
}

/** A run's duration, to the millisecond under 10 s (`0.412s`), else as elapsedText (`42s`, `3m`). */
function secondsText(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(3).replace(/\.?0+$/, '')}s` : elapsedText(ms);
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
