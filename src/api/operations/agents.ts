import { z } from 'zod';
import { estateAgents } from '../../core/agents.ts';
import { defineOperation } from '../define-operation.ts';

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
});

export const agentsList = defineOperation({
  id: 'estate.agents',
  expensive: true,
  method: 'GET',
  path: '/estate/agents',
  access: 'public',
  tag: 'estate',
  summary: 'Known agents from the work feed (last activity, counts, boards) and this node\'s live runtime',
  description: 'Built from the newest 5,000 task completions, most recently active first. An unreadable feed gives an empty list and an `error`.',
  output: z.object({
    items: z.array(
      z.object({
        name: z.string(),
        last_activity: text,
        last_task: z.object({ task_id: text, title: text, board: text }).nullable(),
        completions: z.int(),
        completions_24h: z.int(),
        completions_7d: z.int(),
        boards: z.array(z.string()),
      }),
    ),
    count: z.int(),
    window: z.object({ limit: z.int(), records: z.int(), since: text }).meta({ description: 'The completions the list is built from.' }),
    skipped_lines: z.int(),
    error: text,
    runtime: nodeRuntimeSchema,
  }),
  volatile: ['runtime'],
  handler: ({ ctx }) => estateAgents(ctx.store.completions, ctx.now()),
  cli: { command: 'agents', columns: ['name', 'last_activity', 'completions', 'completions_24h', 'completions_7d', 'boards'], examples: ['estate agents'] },
});
