import type { KeyedRecords } from '../store/store.ts';
import { readSchedule, type Schedule, type ScheduleConfig } from './schedule-spec.ts';
import { type CheckIn, type ScheduleEvent, scheduleEvents, type ScheduleState, scheduleStatus } from './schedule-status.ts';

// The schedules of the config against the work completions of the Store
// (GET /schedules, `estate schedules`, the schedule events of /events, the
// metrics): each schedule's check-ins are the completions of its board whose
// task_id matches, found among the newest CHECK_IN_WINDOW of that board
// (through the board's index: the cost of a read does not grow with the log).

/** The newest completions of a board looked through for a schedule's check-ins. */
export const CHECK_IN_WINDOW = 1000;

export interface ScheduleItem {
  name: string;
  board: string;
  task_id: string;
  every: string | null;
  cron: string | null;
  tz: string | null;
  grace: string;
  state: ScheduleState;
  last_checkin_at: string | null;
  last_task_id: string | null;
  next_due_at: string | null;
  down_at: string | null;
}

/** The check-ins of `schedule` among the newest CHECK_IN_WINDOW completions of its board, oldest first. */
export async function readCheckIns(completions: KeyedRecords, schedule: Schedule): Promise<CheckIn[]> {
  const page = await completions.newest(CHECK_IN_WINDOW, { facet: 'board', value: schedule.config.board });
  const checkIns: CheckIn[] = [];
  for (const record of page.records) {
    const taskId = record.task_id;
    const ms = typeof record.completed_at === 'string' ? Date.parse(record.completed_at) : Number.NaN;
    if (typeof taskId === 'string' && Number.isFinite(ms) && schedule.matches(taskId)) checkIns.push({ ms, taskId });
  }
  return checkIns.sort((a, b) => a.ms - b.ms);
}

/** Every schedule of `configs` with its state at `now`, in the config's order. */
export async function listSchedules(completions: KeyedRecords, configs: readonly ScheduleConfig[], now: Date): Promise<{ items: ScheduleItem[]; count: number }> {
  const items = await Promise.all(
    configs.map(async (config) => {
      const schedule = readSchedule(config);
      const checkIns = await readCheckIns(completions, schedule);
      const status = scheduleStatus(schedule, checkIns.at(-1), now.getTime());
      return {
        name: config.name,
        board: config.board,
        task_id: config.match.task_id,
        every: config.every ?? null,
        cron: config.cron ?? null,
        tz: config.cron === undefined ? null : (config.tz ?? 'UTC'),
        grace: config.grace,
        state: status.state,
        last_checkin_at: status.last ? new Date(status.last.ms).toISOString() : null,
        last_task_id: status.last?.taskId ?? null,
        next_due_at: status.dueMs === undefined ? null : new Date(status.dueMs).toISOString(),
        down_at: status.downMs === undefined ? null : new Date(status.downMs).toISOString(),
      } satisfies ScheduleItem;
    }),
  );
  return { items, count: items.length };
}

/** The state changes of every schedule (scheduleEvents), from the check-ins in their windows. */
export async function allScheduleEvents(completions: KeyedRecords, configs: readonly ScheduleConfig[], now: Date): Promise<ScheduleEvent[]> {
  const lists = await Promise.all(
    configs.map(async (config) => {
      const schedule = readSchedule(config);
      return scheduleEvents(schedule, await readCheckIns(completions, schedule), now.getTime());
    }),
  );
  return lists.flat();
}
