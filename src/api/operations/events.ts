import { z } from 'zod';
import { DATA_FILES } from '../../core/data-files.ts';
import { eventWatch } from '../../config.ts';
import { estateEvents } from '../../core/events/estate-events.ts';
import { defineOperation } from '../define-operation.ts';
import { dateTime, limitParam } from '../schemas.ts';

export const eventsList = defineOperation({
  id: 'events.list',
  method: 'GET',
  path: '/events',
  access: 'protected',
  tag: 'events',
  summary: 'Recent estate events from the heartbeat, the scoreboard, the schedules, the pulse, the providers and the nodes\' trend points, newest first',
  description:
    'Derives events from the state files: each heartbeat, each node silent for longer than `stale_after_s`, and each score; files that cannot be read are named in `errors`. ' +
    'Each schedule of the config (`GET /schedules`) adds its state changes from its check-ins: `schedule_late` at a due time passed, `schedule_down` at due plus grace, `schedule_recovered` at the check-in that ends a down spell; with `max_runtime`, `schedule_down` when a started run (`POST /work/start`) passes it, and with `min_runtime`, `schedule_too_fast` at the completion of a run that took less. ' +
    'Each node\'s pulse (its newest 200 entries; an entry without a node is this node\'s) adds `pulse_degraded`, `pulse_unhealthy` and `pulse_recovered` once a status has held for `alerts.hold` (default `1m`), naming the failing checks. ' +
    'Each configured provider (probed by `estate serve` every `providers_probe_s`, default 30 s; its newest 200 probes) adds `provider_down` and `provider_recovered` once held for `alerts.hold` likewise, naming the error (`timeout`, `status 502`, `connection refused`). ' +
    'Each gap longer than `stale_after_s` between two of a node\'s newest 200 trend points adds a `node_stale` and, where the node sent again, a `node_recovered`. ' +
    'The watched events (every kind but `heartbeat` and `score`) are also stored when they happen: `estate serve` stores each new one every `events.watch_every` (default 10 s), once, whichever replica noticed it first, with its message as it was then; this answer merges the derived events with the newest `limit` stored ones, an event that is both once, so an event stays here after its inputs have left those windows or were pruned.',
  input: { query: z.object({ limit: limitParam(50, 1000, 'events') }) },
  output: z.object({
    items: z.array(
      z
        .object({
          ts: dateTime('When it happened (a stale node: when it became stale), UTC.'),
          kind: z.enum([
            'heartbeat',
            'node_stale',
            'node_recovered',
            'score',
            'schedule_late',
            'schedule_down',
            'schedule_recovered',
            'schedule_too_fast',
            'pulse_degraded',
            'pulse_unhealthy',
            'pulse_recovered',
            'provider_down',
            'provider_recovered',
          ]),
          source: z.enum(['heartbeat', 'scoreboard', 'schedule', 'pulse', 'provider']),
          subject: z.string(),
          message: z.string(),
        })
        .meta({ id: 'EstateEvent' }),
    ),
    count: z.int(),
    limit: z.int(),
    stale_after_s: z.int(),
    skipped_entries: z.int(),
    errors: z.array(z.string()),
  }).meta({ id: 'EstateEventPage' }),
  handler: ({ ctx, input }) => estateEvents(ctx, input.query.limit, ctx.config.events.stale_after_s, ctx.now(), eventWatch(ctx.config)),
  cli: { command: 'events', watch: [`${DATA_FILES.state}/heartbeat.json`, `${DATA_FILES.state}/scoreboard.json`, DATA_FILES.completions, DATA_FILES.events], columns: ['ts', 'kind', 'subject', 'message'], examples: ['estate events --limit 10'] },
});
