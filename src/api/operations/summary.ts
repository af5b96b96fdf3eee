import { z } from 'zod';
import { estateSummary } from '../../core/summary.ts';
import { defineOperation } from '../define-operation.ts';
import { anyRecord, dateTime, nodeNameField, storedTime } from '../schemas.ts';

const text = z.string().nullable();

/** A summary section: its fields (null when the source failed) and its own `error`. */
function section<S extends z.core.$ZodLooseShape>(shape: S, description: string) {
  return z.object({ error: text.meta({ description: 'Why this source failed; null when it answered.' }), ...shape }).meta({ description });
}

const configured = z.boolean().meta({ description: 'False when the config leaves this source out (then the other fields are null and `error` is null).' });

export const summaryGet = defineOperation({
  id: 'summary.get',
  expensive: true,
  method: 'GET',
  path: '/summary',
  access: 'protected',
  tag: 'summary',
  summary: 'Aggregate summary across all data sources, one section per source',
  description:
    'Sources are read concurrently; a failing source (forge down, statistics script hanging, unreadable log) sets its own section\'s `error` ' +
    'and the answer is still 200 with every other section intact. Bounded by the slowest source\'s timeout.',
  output: z.object({
    node: nodeNameField(),
    generated_at: dateTime('When this summary was gathered, UTC.'),
    pulse: section({ status: text, ts: storedTime('The pulse\'s `ts`, as stored').nullable() }, 'The newest health pulse.'),
    trends: section({ latest: anyRecord.nullable() }, 'The newest trend point.'),
    disk: section(
      { mounts: z.array(z.object({ mount: z.string(), used_pct: z.number().nullable(), free_bytes: z.number().nullable(), ts: storedTime('The snapshot\'s `ts`, as stored').nullable() })).nullable() },
      'The newest disk snapshot of each mount.',
    ),
    builds: section(
      { days: z.int().nullable(), total: z.int().nullable(), success: z.int().nullable(), failure: z.int().nullable(), cancelled: z.int().nullable(), success_rate: z.number().nullable() },
      'Builds of the last 7 days.',
    ),
    events: section(
      {
        stale_nodes: z.array(z.string()).nullable(),
        latest: z.array(z.object({ ts: dateTime(), kind: z.string(), subject: z.string(), message: z.string() })).nullable(),
      },
      'Nodes gone quiet and the newest events.',
    ),
    work: section(
      {
        last_24h: z.int().nullable(),
        latest: z
          .object({ task_id: text, title: text, assignee: text, board: text, completed_at: dateTime('When estate recorded the completion, UTC.').nullable() })
          .nullable(),
      },
      'Task completions.',
    ),
    publishing: section(
      { last_30d: z.int().nullable(), latest: z.object({ title: text, content_type: text, target_site: text, ts: storedTime('Its `published_at`, else its `registered_at`').nullable() }).nullable() },
      'Published entries.',
    ),
    ledger: section({ repos: z.int().nullable() }, 'The repository ledger repos.json.'),
    forge: section({ configured, repos: z.int().nullable(), open_issues: z.int().nullable(), archived: z.int().nullable() }, 'The forge\'s repositories.'),
    providers: section(
      { configured, total: z.int().nullable(), reachable: z.int().nullable(), unreachable: z.array(z.string()).nullable() },
      'Reachability of the language-model providers.',
    ),
    stats: section({ configured, data: z.unknown() }, 'The statistics command\'s output.'),
  }).meta({ id: 'Summary' }),
  volatile: ['generated_at'],
  handler: ({ ctx }) => estateSummary(ctx),
  cli: { command: 'summary', progress: 'gathering every source…', examples: ['estate summary', 'estate summary --json | jq "with_entries(select(.value.error?))"'] },
});
