import { z } from 'zod';
import { DATA_FILES } from '../../core/data-files.ts';
import { listSchedules } from '../../core/schedules/read-schedules.ts';
import { defineOperation } from '../define-operation.ts';
import { dateTime } from '../schemas.ts';

export const schedulesList = defineOperation({
  id: 'schedules.list',
  method: 'GET',
  path: '/schedules',
  access: 'protected',
  tag: 'work',
  summary: 'Every schedule of the config with its state, last check-in and next due time (a dead-man\'s switch for cron jobs)',
  description: [
    'A schedule (`schedules` in the config, DESIGN.md 7c) says what should happen and how often: a completion of its `board` whose `task_id` matches its glob is a check-in.',
    'After one, the next is due `every` later, or at the next tick of its `cron` pattern in its time zone `tz` (Vixie cron at DST changes: a tick in the skipped hour runs right after it, one in the repeated hour once).',
    'Past the due time it is `late`; past the due time plus `grace` it is `down`; `new` before its first check-in. Check-ins are looked for among the newest 1000 completions of the board.',
    'A run that had a start (`POST /work/start`, `estate work start`) has a duration: with `max_runtime` the schedule is `down` while a run has run longer (until its completion), and with `min_runtime` a run that completed faster is flagged (`schedule_too_fast` in /events).',
  ].join(' '),
  output: z
    .object({
      items: z.array(
        z
          .object({
            name: z.string(),
            board: z.string(),
            task_id: z.string().meta({ description: 'The glob a completion\'s task_id matches to check in: `*` any run of characters, `?` any one.' }),
            every: z.string().nullable(),
            cron: z.string().nullable(),
            tz: z.string().nullable().meta({ description: 'The cron pattern\'s time zone (IANA), UTC by default; null for an `every` schedule.' }),
            grace: z.string(),
            state: z.enum(['new', 'up', 'late', 'down']),
            last_checkin_at: dateTime('When the newest check-in was recorded, UTC.').nullable(),
            last_task_id: z.string().nullable(),
            next_due_at: dateTime('When the next check-in is due, UTC.').nullable(),
            down_at: dateTime('When the schedule is down without one: due plus grace, UTC; while a run overruns `max_runtime`, when it passed it.').nullable(),
            min_runtime: z.string().nullable().meta({ description: 'A run (with a start) that completes faster is flagged `schedule_too_fast` in /events.' }),
            max_runtime: z.string().nullable().meta({ description: 'A run started and not completed within it makes the schedule `down` until it completes.' }),
            last_duration_s: z.number().nullable().meta({ description: 'How long the newest check-in\'s run took, in seconds, when it had a start (`POST /work/start`).' }),
            running: z
              .array(z.object({ task_id: z.string(), started_at: dateTime('When the run started, UTC.') }))
              .meta({ description: 'With `max_runtime`: the runs started and not completed (among the newest 1000 starts of the board), oldest first; empty otherwise.' }),
          })
          .meta({ id: 'Schedule' }),
      ),
      count: z.int().min(0),
    })
    .meta({ id: 'ScheduleList' }),
  handler: ({ ctx }) => listSchedules(ctx.store, ctx.config.schedules, ctx.now()),
  cli: {
    command: 'schedules',
    watch: [DATA_FILES.completions, DATA_FILES.starts],
    columns: ['name', 'state', 'last_checkin_at', 'last_task_id', 'next_due_at', 'board', 'task_id'],
    examples: ['estate schedules', 'estate schedules --json | jq -r ".items[] | select(.state == \\"down\\") | .name"'],
  },
});
