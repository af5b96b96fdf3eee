import { z } from 'zod';
import { shareValue } from '../../core/jsonl/shared-records.ts';
import { runTiming } from '../../core/runs/run-starts.ts';
import { recordCompletion, workFeed } from '../../core/work.ts';
import { EstateError } from '../../errors.ts';
import { defineOperation, reply } from '../define-operation.ts';
import { describedPattern } from '../pattern-text.ts';
import { dateTime, limitParam, page } from '../schemas.ts';
import { lineField, optionalHttpUrlField, optionalSlugField, optionalTextField, slugField } from '../text-fields.ts';

export const completionBody = z.strictObject({
  task_id: lineField(128, 'The task\'s id on its board, e.g. `EST-393` (1–128 characters, no control characters).'),
  board: slugField('The kanban board, a slug (`ops`, `garden`; at most 64 characters).'),
  assignee: lineField(100, 'Who completed the task: an agent or a person (1–100 characters).'),
  title: lineField(300, 'The task\'s title (1–300 characters).'),
  commit_sha: z
    .string()
    .regex(describedPattern(/^[0-9a-fA-F]{7,40}$/, 'a commit hash: 7 to 40 hex digits'))
    .nullish()
    .meta({ description: 'The commit that completed the task: 7–40 hex digits.', examples: ['e83239b'] }),
  output_url: optionalHttpUrlField('Where the result can be seen: an http(s) URL of at most 2048 characters.'),
  summary: optionalTextField(2000, 'What was done, in at most 2000 characters.'),
});

export const completion = z
  .looseObject({
    id: z.string().meta({ description: 'Given by the service: `wc_` and 16 hex digits.', examples: ['wc_5f6db8edd0285ef0'] }),
    task_id: z.string(),
    board: z.string(),
    assignee: z.string(),
    title: z.string(),
    commit_sha: z.string().optional(),
    output_url: z.string().optional(),
    summary: z.string().optional(),
    completed_at: dateTime('When estate recorded the completion, UTC.'),
    started_at: dateTime('When the run started (`POST /work/start` of the same board and task_id), UTC; present only for a run that had a start.').optional(),
    duration_s: z.number().nonnegative().optional().meta({ description: 'Seconds from `started_at` to `completed_at`, to the millisecond; present only with `started_at`.', examples: [93.417] }),
  })
  .meta({ id: 'WorkCompletion', description: 'A kanban task completion, as stored.' });

type Completion = z.output<typeof completion>;

export const workComplete = defineOperation({
  id: 'work.complete',
  method: 'POST',
  path: '/work/complete',
  access: 'protected',
  tag: 'work',
  summary: 'Record a kanban task completion',
  description: [
    'Stores the completion with an `id` and `completed_at`, durably (on disk before the answer), and answers **201** with the record.',
    'The same `(board, task_id)` sent again with the same fields answers **200** with the stored record and writes nothing, so retries are safe;',
    'with different fields it is **409**.',
    'When the run had a start (`POST /work/start` of the same board and task_id), the record carries its `started_at` and `duration_s`.',
  ].join(' '),
  input: { body: completionBody },
  output: completion,
  status: 201,
  replies: [200],
  errors: [409],
  handler: async ({ ctx, input }) => {
    const timing = await runTiming(ctx.store.starts, input.body.board, input.body.task_id);
    const { outcome, record, differing } = await recordCompletion(ctx.store.completions, input.body, ctx.now, timing);
    if (outcome === 'conflict') {
      throw new EstateError(
        'conflict',
        `task ${input.body.board}/${input.body.task_id} was already recorded (${String(record.id)}) with a different ${differing.join(', ')}`,
      );
    }
    return outcome === 'created' ? (record as Completion) : reply(200, record as Completion);
  },
  cli: {
    command: 'work complete',
    examples: [
      'estate work complete --task-id EST-393 --board garden --assignee scribe --title "Prune about page"',
      'estate work complete --task-id EST-12 --board ops --assignee builder --title "Rotate certs" --commit-sha 9f07821e24 --url http://hub:8080',
    ],
  },
});

/** Feed pages up to this long are cheap: the newest records of an unchanged log are kept (RecordLog's MAX_KEPT_PAGE). */
const KEPT_PAGE = 100;

/** The most bytes of completions one feed answer carries: a page of long records stops short of `limit` rather than grow without bound. */
export const FEED_MAX_BYTES = 1024 * 1024;

export const workFeedOp = defineOperation({
  id: 'work.feed',
  method: 'GET',
  path: '/work/feed',
  access: 'public',
  tag: 'work',
  // A page of 1000 long records is megabytes to read and build: public, so few at once, few of one client's.
  // A page of up to KEPT_PAGE comes from the records the log keeps (src/core/record-log.ts) and runs at once.
  expensive: (query) => !(Number(query.limit ?? 20) <= KEPT_PAGE),
  summary: 'Recent kanban task completions, newest first',
  description: [
    'The newest `limit` completions. One answer carries at most 1 MiB of completions:',
    'when the next one would pass that, the page stops there (`count` below `limit`) and says so with `"truncated": true`.',
  ].join(' '),
  input: {
    query: z.object({
      limit: limitParam(20, 1000, 'completions'),
      board: optionalSlugField('Only completions of this board.'),
    }),
  },
  output: page(completion)
    .extend({
      truncated: z.literal(true).optional().meta({ description: 'Present (true) when the page stopped short of `limit` to stay within 1 MiB.' }),
    })
    .meta({ id: 'WorkCompletionPage' }),
  handler: async ({ ctx, input }) => {
    const page = await workFeed(ctx.store.completions, input.query.limit, input.query.board);
    // A frozen page is the same page as before (an unchanged log): so is its answer, kept with its text and tag.
    const known = Object.isFrozen(page) ? keptAnswers.get(page) : undefined;
    if (known) return known;
    const { records, skipped } = page;
    const items = withinBytes(records as Completion[], FEED_MAX_BYTES);
    const built: FeedAnswer = { items, count: items.length, limit: input.query.limit, skipped_lines: skipped };
    const answer: FeedAnswer = items.length < records.length ? { ...built, truncated: true } : built;
    if (Object.isFrozen(page)) keptAnswers.set(page, shareValue(answer));
    return answer;
  },
  cli: {
    command: 'work feed',
    columns: ['completed_at', 'board', 'task_id', 'assignee', 'title'],
    examples: ['estate work feed --board ops --limit 10', 'estate work feed --follow'],
  },
});

/** Feed answers by the frozen page they were made of (see RecordLog.newest): shared, so sent again without being built, checked or serialised again. */
const keptAnswers = new WeakMap<object, FeedAnswer>();

interface FeedAnswer {
  items: Completion[];
  count: number;
  limit: number;
  skipped_lines: number;
  truncated?: true;
}

/** The first of `items` whose JSON takes at most `maxBytes` in all (always the first one). */
function withinBytes<T>(items: T[], maxBytes: number): T[] {
  let bytes = 0;
  for (let i = 0; i < items.length; i++) {
    bytes += Buffer.byteLength(JSON.stringify(items[i]), 'utf8') + 1;
    if (bytes > maxBytes && i > 0) return items.slice(0, i);
  }
  return items;
}
