import { z } from 'zod';
import { recordStart } from '../../core/runs/run-starts.ts';
import { EstateError } from '../../errors.ts';
import { defineOperation, reply } from '../define-operation.ts';
import { dateTime } from '../schemas.ts';
import { optionalLineField } from '../text-fields.ts';
import { completionBody } from './work.ts';

// POST /work/start (DESIGN.md 7c): a run has begun. A module of its own, so
// the commands of the other work operations build none of its schemas.

export const startBody = z.strictObject({
  task_id: completionBody.shape.task_id,
  board: completionBody.shape.board,
  assignee: optionalLineField(100, 'Who runs it: an agent, a host or a person (1–100 characters).'),
});

export const start = z
  .looseObject({
    id: z.string().meta({ description: 'Given by the service: `ws_` and 16 hex digits.', examples: ['ws_0c1d5e36a8f2b749'] }),
    task_id: z.string(),
    board: z.string(),
    assignee: z.string().optional(),
    started_at: dateTime('When estate recorded the start, UTC.'),
  })
  .meta({ id: 'WorkStart', description: 'The start of a run, as stored.' });

type Start = z.output<typeof start>;

export const workStart = defineOperation({
  id: 'work.start',
  method: 'POST',
  path: '/work/start',
  access: 'protected',
  tag: 'work',
  summary: 'Record the start of a run',
  description: [
    'A job says its run has begun; the completion of the same `(board, task_id)` (`POST /work/complete`) ends it and carries the start\'s `started_at` and the run\'s `duration_s`.',
    'Each run is its own pair (name the run: `backup-2026-11-27`), so overlapping runs pair up.',
    'Stored durably with an `id` and `started_at`: **201** with the record; the same pair again with the same fields answers **200** with the stored start and writes nothing;',
    'with other fields, or once the run has completed, it is **409**.',
    'A schedule with `max_runtime` is down while a run of it has run longer (DESIGN.md 7c).',
  ].join(' '),
  input: { body: startBody },
  output: start,
  status: 201,
  replies: [200],
  errors: [409],
  handler: async ({ ctx, input }) => {
    const result = await recordStart(ctx.store.starts, ctx.store.completions, input.body, ctx.now);
    const run = `${input.body.board}/${input.body.task_id}`;
    if (result.outcome === 'completed') {
      throw new EstateError('conflict', `run ${run} has completed already (${String(result.completion.id)} at ${String(result.completion.completed_at)}): a run starts before its completion; name a new run for a new start`);
    }
    if (result.outcome === 'conflict') {
      throw new EstateError('conflict', `run ${run} was already started (${String(result.record.id)} at ${String(result.record.started_at)}) with a different ${result.differing.join(', ')}`);
    }
    return result.outcome === 'created' ? (result.record as Start) : reply(200, result.record as Start);
  },
  cli: {
    command: 'work start',
    examples: [
      'estate work start --board ops --task-id backup-2026-11-27 --assignee cron@db1',
      'estate work start --board ops --task-id "backup-$(date +%F)" --url http://hub:8080',
    ],
  },
});
