import { z } from 'zod';
import { FORGE_PAGE_SIZE, forgeList } from './forge-list.ts';
import type { ForgeInFlight } from './forge-request.ts';
import type { ForgeSettings } from './forge-settings.ts';

/**
 * An owner or repository name as Forgejo allows them: letters, digits,
 * `_`, `.`, `-`, at most 100 characters, never `.` or `..`. Checked before
 * any name reaches an upstream URL (where it is also percent-encoded).
 */
export const FORGE_NAME = /^(?!\.\.?$)[A-Za-z0-9_.-]{1,100}$/;

export const ISSUE_STATES = ['open', 'closed', 'all'] as const;
export type IssueState = (typeof ISSUE_STATES)[number];

export interface ForgeIssue {
  number: number;
  title: string;
  state: string;
  author: string | null;
  labels: string[];
  comments: number;
  url: string | null;
  created_at: string | null;
  updated_at: string | null;
  closed_at: string | null;
}

export interface ForgeIssueList {
  /** Newest first, as the forge orders them. */
  items: ForgeIssue[];
  count: number;
  /** `owner/repo`. */
  repo: string;
  state: IssueState;
  limit: number;
}

const str = z.string().nullish().catch(null);

/** A Forgejo `Issue`; a pull request is an issue whose `pull_request` is set. */
const upstreamIssue = z.looseObject({
  number: z.number(),
  title: z.string(),
  state: z.string().catch('unknown'),
  user: z.looseObject({ login: str }).nullish().catch(null),
  labels: z.array(z.looseObject({ name: str })).nullish().catch(null),
  comments: z.number().nullish().catch(null),
  html_url: str,
  created_at: str,
  updated_at: str,
  closed_at: str,
  pull_request: z.unknown().optional(),
});

/**
 * Up to `limit` issues of one repository, from
 * `GET /api/v1/repos/{owner}/{repo}/issues?type=issues&state=…`, page by page.
 * Pull requests are excluded by `type=issues` and, for forges that ignore it,
 * dropped here too. An unknown repository is a `not_found` error. Requests
 * in flight are shared with `shared`.
 */
export async function listForgeIssues(
  forge: ForgeSettings,
  owner: string,
  repo: string,
  state: IssueState,
  limit: number,
  shared?: ForgeInFlight,
): Promise<ForgeIssueList> {
  const path = `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/issues`;
  const listing = await forgeList(forge, path, { state, type: 'issues' }, {
    pageSize: Math.min(limit, FORGE_PAGE_SIZE),
    itemsOf: (body) => (Array.isArray(body) ? body : undefined),
    map: toForgeIssue,
    want: limit,
    notFound: `repository ${owner}/${repo} was not found on the forge at ${forge.url} (or the token cannot see it)`,
    shared,
  });
  return { items: listing.items, count: listing.items.length, repo: `${owner}/${repo}`, state, limit };
}

function toForgeIssue(item: unknown): ForgeIssue | undefined {
  const parsed = upstreamIssue.safeParse(item);
  if (!parsed.success) return undefined;
  const i = parsed.data;
  if (i.pull_request !== undefined && i.pull_request !== null) return undefined;
  return {
    number: i.number,
    title: i.title,
    state: i.state,
    author: i.user?.login ?? null,
    labels: (i.labels ?? []).map((l) => l.name).filter((n): n is string => Boolean(n)),
    comments: i.comments ?? 0,
    url: i.html_url ?? null,
    created_at: i.created_at ?? null,
    updated_at: i.updated_at ?? null,
    closed_at: i.closed_at ?? null,
  };
}
