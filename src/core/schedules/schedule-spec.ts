import { Cron } from 'croner';
import { parseDuration } from '../duration.ts';

// A schedule of the config (DESIGN.md 7c, `schedules`): what should happen
// and how often. Each completion of `board` whose task_id matches
// `match.task_id` is a check-in.

export interface ScheduleConfig {
  name: string;
  board: string;
  match: { task_id: string };
  every?: string | undefined;
  cron?: string | undefined;
  tz?: string | undefined;
  grace: string;
  min_runtime?: string | undefined;
  max_runtime?: string | undefined;
}

/** A schedule read for evaluation: its durations in ms, its task_id glob as a test, and when a check-in at `ms` makes it due next. */
export interface Schedule {
  config: ScheduleConfig;
  graceMs: number;
  /** A run that completes faster is flagged (`schedule_too_fast`); needs a start. */
  minRuntimeMs: number | undefined;
  /** A run started and not completed within it makes the schedule down. */
  maxRuntimeMs: number | undefined;
  matches: (taskId: string) => boolean;
  /** When the next check-in is due after one at `ms` (undefined: a cron with no later tick). */
  dueAfter: (ms: number) => number | undefined;
}

/** The schedule `config`, checked: throws an Error naming what is wrong (a bad duration, cron pattern or time zone). */
export function readSchedule(config: ScheduleConfig): Schedule {
  const graceMs = parseDuration(config.grace, 'grace');
  const minRuntimeMs = config.min_runtime === undefined ? undefined : parseDuration(config.min_runtime, 'min_runtime');
  const maxRuntimeMs = config.max_runtime === undefined ? undefined : parseDuration(config.max_runtime, 'max_runtime');
  const matches = globTest(config.match.task_id);
  const read = { config, graceMs, minRuntimeMs, maxRuntimeMs, matches };
  if (config.every !== undefined) {
    const everyMs = parseDuration(config.every, 'every');
    return { ...read, dueAfter: (ms) => ms + everyMs };
  }
  const cron = new Cron(config.cron ?? '', { timezone: config.tz ?? 'UTC', paused: true });
  // A first tick shows a bad time zone (croner reads it lazily), and a pattern that never runs (30 February).
  if (cron.nextRun(new Date()) === null) throw new Error(`the pattern "${config.cron}" has no next run`);
  return { ...read, dueAfter: (ms) => cron.nextRun(new Date(ms))?.getTime() };
}

/** A test of a task_id against a glob: `*` any run of characters, `?` any one, everything else itself. */
export function globTest(glob: string): (text: string) => boolean {
  const source = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  const pattern = new RegExp(`^${source}$`, 's');
  return (text) => pattern.test(text);
}
