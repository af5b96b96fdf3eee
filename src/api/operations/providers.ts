import { z } from 'zod';
import { providerReport } from '../../core/providers.ts';
import { defineOperation } from '../define-operation.ts';
import { dateTime } from '../schemas.ts';

export const providersList = defineOperation({
  id: 'providers.list',
  expensive: true,
  method: 'GET',
  path: '/providers',
  access: 'protected',
  tag: 'providers',
  summary: 'Reachability of the configured language-model providers',
  description:
    'Every provider is checked at once, each within its own `timeout_ms`, so the answer takes about the slowest timeout. ' +
    'Results are cached for `providers_cache_s` seconds. An unreachable provider is a row with `reachable: false` and an `error`, never a failed answer.',
  output: z.object({
    items: z.array(
      z.object({
        name: z.string(),
        url: z.string(),
        reachable: z.boolean(),
        status: z.int().nullable().meta({ description: 'The HTTP status it answered with; null when it did not answer.' }),
        latency_ms: z.int().nullable(),
        error: z.string().nullable(),
        checked_at: dateTime('When it was checked, UTC.'),
      }).meta({ id: 'Provider', description: 'One configured language-model provider and the outcome of checking it.' }),
    ),
    count: z.int(),
    reachable: z.int(),
    unreachable: z.int(),
    checked_at: dateTime('When it was checked, UTC.'),
    duration_ms: z.int(),
  }).meta({ id: 'ProviderReport', description: 'Every configured provider, checked, with the counts of reachable and unreachable ones.' }),
  handler: ({ ctx }) => providerReport(ctx),
  cli: {
    command: 'providers',
    columns: ['name', 'reachable', 'status', 'latency_ms', 'error', 'url'],
    progress: 'checking providers…',
    examples: ['estate providers', 'estate providers --json | jq ".items[] | select(.reachable | not)"'],
  },
});
