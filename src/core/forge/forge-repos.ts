import { z } from 'zod';
import { FORGE_PAGE_SIZE, forgeList } from './forge-list.ts';
import type { ForgeInFlight } from './forge-request.ts';
import type { ForgeSettings } from './forge-settings.ts';

/** One forge repository, as estate returns it. */
export interface ForgeRepo {
  /** `owner/name`. */
  name: string;
  owner: string;
  description: string | null;
  url: string | null;
  /** Open issues, pull requests excluded (Forgejo counts those apart). */
  open_issues: number;
  open_pull_requests: number | null;
  stars: number;
  forks: number;
  language: string | null;
  archived: boolean;
  private: boolean;
  fork: boolean;
  default_branch: string | null;
  updated_at: string | null;
}

export interface ForgeRepoList {
  items: ForgeRepo[];
  count: number;
  /** True when the forge had more repositories than one listing reads. */
  truncated: boolean;
  /** Items of the forge's answer that were not repositories. */
  skipped: number;
}

const str = z.string().nullish().catch(null);
const num = z.number().nullish().catch(null);
const bool = z.boolean().nullish().catch(null);

/** A Forgejo `Repository`, read leniently: only `full_name` (or `owner.login` + `name`) is required. */
const upstreamRepo = z.looseObject({
  full_name: str,
  name: str,
  owner: z.looseObject({ login: str }).nullish().catch(null),
  description: str,
  html_url: str,
  open_issues_count: num,
  open_pr_counter: num,
  stars_count: num,
  forks_count: num,
  language: str,
  archived: bool,
  private: bool,
  fork: bool,
  default_branch: str,
  updated_at: str,
});

/**
 * Every repository the forge shows to the token, from `GET /api/v1/repos/search`
 * (`{"ok": true, "data": [...]}`), page by page, sharing requests in flight with `shared`.
 */
export async function listForgeRepos(forge: ForgeSettings, shared?: ForgeInFlight): Promise<ForgeRepoList> {
  const listing = await forgeList(forge, '/repos/search', { sort: 'alpha', order: 'asc' }, {
    pageSize: FORGE_PAGE_SIZE,
    itemsOf: (body) => {
      if (Array.isArray(body)) return body;
      const data = (body as { data?: unknown } | null)?.data;
      return Array.isArray(data) ? data : undefined;
    },
    map: toForgeRepo,
    shared,
  });
  return { items: listing.items, count: listing.items.length, truncated: listing.truncated, skipped: listing.dropped };
}

function toForgeRepo(item: unknown): ForgeRepo | undefined {
  const parsed = upstreamRepo.safeParse(item);
  if (!parsed.success) return undefined;
  const r = parsed.data;
  const owner = r.owner?.login ?? r.full_name?.split('/')[0] ?? null;
  const name = r.full_name ?? (owner && r.name ? `${owner}/${r.name}` : null);
  if (!name || !owner) return undefined;
  return {
    name,
    owner,
    description: r.description || null,
    url: r.html_url ?? null,
    open_issues: r.open_issues_count ?? 0,
    open_pull_requests: r.open_pr_counter ?? null,
    stars: r.stars_count ?? 0,
    forks: r.forks_count ?? 0,
    language: r.language || null,
    archived: r.archived ?? false,
    private: r.private ?? false,
    fork: r.fork ?? false,
    default_branch: r.default_branch ?? null,
    updated_at: r.updated_at ?? null,
  };
}
