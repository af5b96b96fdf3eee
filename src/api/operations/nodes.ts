import { z } from 'zod';
import { listNodes } from '../../core/hub/list-nodes.ts';
import { defineOperation } from '../define-operation.ts';
import { dateTime } from '../schemas.ts';

const figure = (description: string) => z.number().nullable().meta({ description: `${description}; null when the node has not sent it.` });

export const nodesList = defineOperation({
  id: 'nodes.list',
  method: 'GET',
  path: '/nodes',
  access: 'protected',
  tag: 'hub',
  summary: 'Every node of the estate with its latest figures, and whether it is stale',
  description: [
    'Every node known from the heartbeat or from the series (this node\'s own collector and every node that sends to `POST /ingest`), sorted by name,',
    'with its latest trend point\'s CPU, memory and load, the fullest file system of its newest disk snapshots and its latest pulse status.',
    'A node is `stale` when nothing was heard of it for `stale_after_s` (`events.stale_after_s` in the config). Per node a few reads of its newest records.',
  ].join(' '),
  output: z
    .object({
      items: z.array(
        z
          .object({
            name: z.string(),
            last_seen: dateTime('When the node was last heard of (its heartbeat or its newest trend point), UTC.').nullable(),
            stale: z.boolean().meta({ description: 'Nothing heard of it for `stale_after_s` seconds, or never.' }),
            status: z.string().nullable().meta({ description: 'Its latest pulse status (`healthy`, `degraded`, `unhealthy`), else its heartbeat\'s.' }),
            cpu_pct: figure('CPU busy share, 0–100, of its newest trend point'),
            mem_used_pct: figure('Memory used, 0–100, of its newest trend point'),
            load1: figure('One-minute load average of its newest trend point'),
            disk_used_pct: figure('The highest used share (used / (used + free) × 100, as `df` shows it) among the file systems of its newest disk snapshots'),
          })
          .meta({ id: 'NodeSummary' }),
      ),
      count: z.int().min(0),
      stale_after_s: z.int(),
      errors: z.array(z.string()).meta({ description: 'The heartbeat, when it cannot be read (its nodes are then known from the series alone).' }),
    })
    .meta({ id: 'NodeList' }),
  handler: ({ ctx }) => listNodes(ctx.store.series, ctx.config.events.stale_after_s, ctx.now()),
  cli: {
    command: 'nodes',
    columns: ['name', 'status', 'cpu_pct', 'mem_used_pct', 'disk_used_pct', 'load1', 'last_seen', 'stale'],
    examples: ['estate nodes', 'estate nodes --url http://hub:8080 --json', 'estate nodes --json | jq -r ".items[] | select(.stale) | .name"'],
  },
});
