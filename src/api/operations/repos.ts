import { z } from 'zod';
import { mergedRepos } from '../../core/merged-repos.ts';
import { defineOperation } from '../define-operation.ts';
import { storedTime } from '../schemas.ts';

export const reposList = defineOperation({
  id: 'repos.list',
  expensive: true,
  method: 'GET',
  path: '/repos',
  access: 'protected',
  tag: 'forge',
  summary: 'Repositories from the forge and from the ledger repos.json, each marked with its source',
  description:
    'Merged by name; the ledger\'s url and description win, the forge adds its counts. ' +
    'When the forge is down or not configured the ledger still answers, with the reason in `forge_error`.',
  output: z.object({
    items: z.array(
      z.object({
        name: z.string(),
        source: z.enum(['forge', 'ledger', 'both']),
        url: z.string().nullable(),
        description: z.string().nullable(),
        open_issues: z.int().nullable(),
        stars: z.int().nullable(),
        language: z.string().nullable(),
        archived: z.boolean().nullable(),
        updated_at: storedTime('When the forge last saw a change to it, as the forge sends it; null for a repository only the ledger has').nullable(),
      }).meta({ id: 'Repo', description: 'A repository of the forge, of the ledger repos.json, or of both (`source`).' }),
    ),
    count: z.int(),
    forge_configured: z.boolean(),
    forge_error: z.string().nullable(),
    ledger_error: z.string().nullable(),
    ledger_skipped: z.int().meta({ description: 'Entries of repos.json that are not {name, url, description?}.' }),
  }).meta({ id: 'RepoList', description: 'The forge\'s and the ledger\'s repositories merged by name, with why either source could not be read.' }),
  handler: ({ ctx }) => mergedRepos(ctx),
  cli: {
    command: 'repos',
    columns: ['name', 'source', 'open_issues', 'stars', 'language', 'url'],
    progress: 'asking the forge…',
    examples: ['estate repos', 'estate repos --json | jq ".forge_error"'],
  },
});
