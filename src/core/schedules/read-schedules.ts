import type { JsonRecord, Store } from '../store/store.ts';
import { readSchedule, type Schedule, type ScheduleConfig } from './schedule-spec.ts';
import { type CheckIn, type OpenRun, type ScheduleEvent, scheduleEvents, type ScheduleState, scheduleStatus } from './schedule-status.ts';

// The schedules of the config against the work completions and run starts
// of the Store (GET /schedules, `estate schedules`, the schedule events of
// /events, the metrics): each schedule's check-ins are the completions of
// its board whose task_id matches, found among the newest CHECK_IN_WINDOW of
// that board (through the board's index: the cost of a read does not grow
// with the log); with `max_runtime`, its open runs are the matching starts
// among the newest CHECK_IN_WINDOW starts of the board with no completion.

/** The newest completions (and starts) of a board looked through for a schedule's check-ins (and open runs). */
export const CHECK_IN_WINDOW = 1000;

/** The parts of the Store the schedules read. */
export type RunRecords = Pick<Store, 'completions' | 'starts'>;

/** A schedule's runs as the Store has them: check-ins oldest first, and the runs started and not completed. */
export interface ScheduleRuns {
  checkIns: CheckIn[];
  open: OpenRun[];
}

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
  min_runtime: string | null;
  max_runtime: string | null;
  last_duration_s: number | null;
  running: { task_id: string; started_at: string }[];
}

/** The check-ins of `schedule` among the newest CHECK_IN_WINDOW completions of its board, oldest first, and its open runs. */
export async function readRuns(store: RunRecords, schedule: Schedule): Promise<ScheduleRuns> {
  const board = { facet: 'board', value: schedule.config.board };
  const page = await store.completions.newest(CHECK_IN_WINDOW, board);
  const checkIns: CheckIn[] = [];
  for (const record of page.records) {
    const taskId = record.task_id;
    const ms = timeOf(record, 'completed_at');
    if (typeof taskId !== 'string' || ms === undefined || !schedule.matches(taskId)) continue;
    checkIns.push({ ms, taskId, startedMs: timeOf(record, 'started_at') });
  }
  checkIns.sort((a, b) => a.ms - b.ms);
  return { checkIns, open: await openRuns(store, schedule, checkIns, page.records.length < CHECK_IN_WINDOW ? undefined : timeOf(page.records.at(-1) as JsonRecord, 'completed_at')) };
}

/**
 * The matching starts of the board with no completion, oldest first: read
 * only for a schedule with `max_runtime` (nothing else looks at them). A
 * start older than the completions looked through (`windowFromMs`, when
 * the window was full) is checked for its completion by its key.
 */
async function openRuns(store: RunRecords, schedule: Schedule, checkIns: readonly CheckIn[], windowFromMs: number | undefined): Promise<OpenRun[]> {
  if (schedule.maxRuntimeMs === undefined) return [];
  const completed = new Set(checkIns.map((c) => c.taskId));
  const page = await store.starts.newest(CHECK_IN_WINDOW, { facet: 'board', value: schedule.config.board });
  const open: OpenRun[] = [];
  for (const record of page.records) {
    const taskId = record.task_id;
    const startedMs = timeOf(record, 'started_at');
    if (typeof taskId !== 'string' || startedMs === undefined || !schedule.matches(taskId) || completed.has(taskId)) continue;
    if (windowFromMs !== undefined && startedMs < windowFromMs && (await store.completions.byKey([schedule.config.board, taskId]))) continue;
    open.push({ startedMs, taskId });
  }
  return open.sort((a, b) => a.startedMs - b.startedMs);
}

function timeOf(record: JsonRecord, field: string): number | undefined {
  const ms = typeof record[field] === 'string' ? Date.parse(record[field] as string) : Number.NaN;
  return Number.isFinite(ms) ? ms : undefined;
}

/** Every schedule of `configs` with its state at `now`, in the config's order. */
export async function listSchedules(store: RunRecords, configs: readonly ScheduleConfig[], now: Date): Promise<{ items: ScheduleItem[]; count: number }> {
  const items = await Promise.all(
    configs.map(async (config) => {
      const schedule = readSchedule(config);
      const { checkIns, open } = await readRuns(store, schedule);
      const last = checkIns.at(-1);
      const status = scheduleStatus(schedule, last, now.getTime(), open);
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
        min_runtime: config.min_runtime ?? null,
        max_runtime: config.max_runtime ?? null,
        last_duration_s: last?.startedMs === undefined ? null : (last.ms - last.startedMs) / 1000,
        running: open.map((run) => ({ task_id: run.taskId, started_at: new Date(run.startedMs).toISOString() })),
      } satisfies ScheduleItem;
    }),
  );
  return { items, count: items.length };
}

/** The state changes of every schedule (scheduleEvents), from the check-ins and open runs in their windows. */
export async function allScheduleEvents(store: RunRecords, configs: readonly ScheduleConfig[], now: Date): Promise<ScheduleEvent[]> {
  const lists = await Promise.all(
    configs.map(async (config) => {
      const schedule = readSchedule(config);
      const { checkIns, open } = await readRuns(store, schedule);
      return scheduleEvents(schedule, checkIns, now.getTime(), open);
    }),
  );
  return lists.flat();
}
