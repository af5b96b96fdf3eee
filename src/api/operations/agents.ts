import { z } from 'zod';
import { estateAgents } from '../../core/agents.ts';
import { defineOperation } from '../define-operation.ts';
import { dateTime } from '../schemas.ts';

const text = z.string().nullable();

/** This node's live telemetry (shared with /estate/status). */
export const nodeRuntimeSchema = z.object({
  hostname: z.string(),
  platform: z.string(),
  arch: z.string(),
  node_version: z.string(),
  cpus: z.int(),
  load_avg: z.array(z.number()).meta({ description: '1, 5 and 15 minute load averages.' }),
  memory: z.object({ total_bytes: z.number(), free_bytes: z.number(), used_pct: z.number() }),
  host_uptime_s: z.number(),
}).meta({ id: 'NodeRuntime', description: 'This node\'s live telemetry: host, platform, CPUs, load and memory.' });

/** A completion's `completed_at`: written by estate when it recorded the completion. */
const completedAt = (description: string) => dateTime(description).nullable();

export const agentsList = defineOperation({
  id: 'estate.agents',
  expensive: true,
  method: 'GET',
  path: '/estate/agents',
  access: 'public',
  tag: 'estate',
  summary: 'Known agents from the work feed (last activity, counts, boards) and this node\'s live runtime',
  description:
    'Built from every task completion of the feed (exact counts, kept current as completions are written, whatever the feed\'s size), most recently active first. ' +
    'An unreadable feed gives an empty list and an `error`.',
  output: z.object({
    items: z.array(
      z.object({
        name: z.string(),
        last_activity: completedAt('When the agent last completed a task (its newest completion\'s `completed_at`), UTC.'),
        last_task: z.object({ task_id: text, title: text, board: text }).nullable(),
        completions: z.int(),
        completions_24h: z.int(),
        completions_7d: z.int(),
        boards: z.array(z.string()),
      }).meta({ id: 'Agent', description: 'An agent of the work feed: its last task, how many it completed, and on which boards.' }),
    ),
    count: z.int(),
    window: z
      .object({ records: z.int(), since: completedAt('The earliest completion\'s `completed_at`, UTC; null when there are none.') })
      .meta({ description: 'What the counts cover: every completion of the feed.' }),
    skipped_lines: z.int(),
    error: text,
    runtime: nodeRuntimeSchema,
  }).meta({ id: 'AgentList', description: 'The agents of the work feed, most recently active first, and this node\'s runtime.' }),
  volatile: ['runtime'],
  handler: ({ ctx }) => estateAgents(ctx.store.completions, ctx.now()),
  cli: { command: 'agents', columns: ['name', 'last_activity', 'completions', 'completions_24h', 'completions_7d', 'boards'], examples: ['estate agents'] },
});
