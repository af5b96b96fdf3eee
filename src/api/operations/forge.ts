import { z } from 'zod';
import { FORGE_NAME, ISSUE_STATES } from '../../core/forge/forge-issues.ts';
import { forgeIssues, forgeRepos } from '../../core/forge/forge-source.ts';
import { defineOperation } from '../define-operation.ts';
import { describedPattern } from '../pattern-text.ts';
import { limitParam, storedTime } from '../schemas.ts';

// The forge (Forgejo or Gitea) through estate: token auth, pagination,
// a short cache, and clear 502/503/504 answers when it is down or slow.

const nullableText = z.string().nullable();

/** A time the forge sends: passed through as it is, null when the forge leaves it out. */
const forgeTime = (what: string) => storedTime(`${what}, as the forge sends it`).nullable();

export const forgeRepo = z.object({
  name: z.string().meta({ description: '`owner/name` on the forge.' }),
  owner: z.string(),
  description: nullableText,
  url: nullableText.meta({ description: 'The repository\'s web page on the forge.' }),
  open_issues: z.int().meta({ description: 'Open issues, pull requests not included.' }),
  open_pull_requests: z.int().nullable(),
  stars: z.int(),
  forks: z.int(),
  language: nullableText,
  archived: z.boolean(),
  private: z.boolean(),
  fork: z.boolean(),
  default_branch: nullableText,
  updated_at: forgeTime('When the repository last changed'),
}).meta({ id: 'ForgeRepo', description: 'A repository of the forge, with its counts and flags as the forge reports them.' });

const forgeErrors = [502, 503, 504];

export const forgeReposOp = defineOperation({
  id: 'forge.repos',
  expensive: true,
  method: 'GET',
  path: '/forgejo-proxy/repos',
  access: 'protected',
  tag: 'forge',
  summary: 'All forge repositories, enriched: open issues, stars, language, archived, updated time, URL',
  description:
    'Every repository the forge token can see, read page by page and cached for `forge.cache_s` seconds. ' +
    '503 when no forge is configured; 502 when it is unreachable or answers with an error; 504 when it is too slow.',
  output: z.object({
    items: z.array(forgeRepo),
    count: z.int(),
    truncated: z.boolean().meta({ description: 'True when the forge had more repositories than one listing reads (2,500).' }),
    skipped: z.int().meta({ description: 'Items of the forge\'s answer that were not repositories.' }),
  }).meta({ id: 'ForgeRepoList', description: 'Every repository the forge token can see.' }),
  errors: forgeErrors,
  handler: ({ ctx }) => forgeRepos(ctx),
  cli: {
    command: 'forge repos',
    columns: ['name', 'open_issues', 'stars', 'language', 'archived', 'updated_at'],
    progress: 'asking the forge…',
    examples: ['estate forge repos', 'estate forge repos --json | jq ".items[].name"'],
  },
});

const forgeName = (what: string) => z.string().regex(describedPattern(FORGE_NAME, 'a forge name: 1 to 100 letters, digits, "_", "." or "-" (not "." or "..")')).meta({ description: `${what}: letters, digits, "_", ".", "-".` });

export const forgeIssuesOp = defineOperation({
  id: 'forge.issues',
  expensive: true,
  method: 'GET',
  path: '/forgejo-proxy/issues/{owner}/{repo}',
  access: 'protected',
  tag: 'forge',
  summary: 'Issues of one forge repository (pull requests excluded), newest first',
  description: '404 when the forge does not know the repository; 502/503/504 as for /forgejo-proxy/repos.',
  input: {
    path: z.object({ owner: forgeName('Owner (user or organisation) on the forge'), repo: forgeName('Repository name') }),
    query: z.object({
      state: z.enum(ISSUE_STATES).default('open').meta({ description: 'Which issues: open, closed or all.' }),
      limit: limitParam(20, 1000, 'issues'),
    }),
  },
  output: z.object({
    items: z.array(
      z.object({
        number: z.int(),
        title: z.string(),
        state: z.string(),
        author: nullableText,
        labels: z.array(z.string()),
        comments: z.int(),
        url: nullableText.meta({ description: 'The issue\'s web page on the forge.' }),
        created_at: forgeTime('When the issue was opened'),
        updated_at: forgeTime('When the issue last changed'),
        closed_at: forgeTime('When the issue was closed (null while it is open)'),
      }).meta({ id: 'ForgeIssue', description: 'An issue of a forge repository (never a pull request).' }),
    ),
    count: z.int(),
    repo: z.string(),
    state: z.enum(ISSUE_STATES),
    limit: z.int(),
  }).meta({ id: 'ForgeIssuePage', description: 'The newest `limit` issues of one repository in one state.' }),
  errors: [404, ...forgeErrors],
  handler: ({ ctx, input }) => forgeIssues(ctx, input.path.owner, input.path.repo, input.query.state, input.query.limit),
  cli: {
    command: 'forge issues',
    args: ['owner/repo'],
    columns: ['number', 'title', 'state', 'author', 'labels', 'updated_at'],
    progress: 'asking the forge…',
    examples: ['estate forge issues estate/infra', 'estate forge issues estate/estate --state all --limit 50'],
  },
});
