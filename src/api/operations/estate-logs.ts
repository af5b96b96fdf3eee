import { z } from 'zod';
import { workFeed } from '../../core/work.ts';
import { defineOperation } from '../define-operation.ts';
import { dateTime, limitParam, page } from '../schemas.ts';

const activity = z.object({
  ts: dateTime('When the task was completed (the completion\'s `completed_at`), UTC.'),
  agent: z.string().meta({ description: 'Who did it (the completion\'s assignee).' }),
  message: z.string().meta({ description: 'One readable line: `scribe completed garden/EST-393: Prune about page`.' }),
  board: z.string(),
  task_id: z.string(),
  title: z.string(),
  completion_id: z.string(),
  url: z.string().nullable().meta({ description: 'The completion\'s output_url, if any.' }),
}).meta({ id: 'Activity', description: 'One task completion as a line of the activity log.' });

export const estateLogs = defineOperation({
  id: 'estate.logs',
  method: 'GET',
  path: '/estate/logs',
  access: 'public',
  tag: 'estate',
  summary: 'Recent activity from the kanban work completion feed, newest first',
  description: 'The newest task completions, each as one readable line with its agent, board and links.',
  input: { query: z.object({ limit: limitParam(20, 1000, 'entries') }) },
  output: page(activity, 'ActivityPage'),
  handler: async ({ ctx, input }) => {
    const { records, skipped } = await workFeed(ctx.store.completions, input.query.limit);
    const items = records.map((r) => ({
      ts: String(r.completed_at),
      agent: String(r.assignee),
      message: `${String(r.assignee)} completed ${String(r.board)}/${String(r.task_id)}: ${String(r.title)}`,
      board: String(r.board),
      task_id: String(r.task_id),
      title: String(r.title),
      completion_id: String(r.id),
      url: typeof r.output_url === 'string' ? r.output_url : null,
    }));
    return { items, count: items.length, limit: input.query.limit, skipped_lines: skipped };
  },
  cli: { command: 'logs', columns: ['ts', 'agent', 'message'], examples: ['estate logs --limit 5'] },
});
