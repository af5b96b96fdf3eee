import type { SourceContext } from '../external-sources.ts';
import type { IssueState, ForgeIssueList } from './forge-issues.ts';
import { listForgeIssues } from './forge-issues.ts';
import { listForgeRepos, type ForgeRepoList } from './forge-repos.ts';
import { forgeSettings } from './forge-settings.ts';

// The forge as the operations see it: settings from the context, answers
// kept for `forge.cache_s` seconds, concurrent identical calls shared, and
// below them every upstream request in flight shared by URL, whichever
// listing asks (`limit=100` and `limit=200` read the same pages once).
// Owner and repository names are case-insensitive on Forgejo and Gitea, so
// `Org/App` and `org/app` are one call.

export function forgeRepos(ctx: SourceContext): Promise<ForgeRepoList> {
  const forge = forgeSettings(ctx.config, ctx.sources.secrets);
  return ctx.sources.forgeRepos.get('repos', () => listForgeRepos(forge, ctx.sources.forgeInFlight));
}

export function forgeIssues(ctx: SourceContext, owner: string, repo: string, state: IssueState, limit: number): Promise<ForgeIssueList> {
  const forge = forgeSettings(ctx.config, ctx.sources.secrets);
  const key = JSON.stringify([owner.toLowerCase(), repo.toLowerCase(), state, limit]);
  const list = ctx.sources.forgeIssues.get(key, () => listForgeIssues(forge, owner, repo, state, limit, ctx.sources.forgeInFlight));
  return list.then((l) => ({ ...l, repo: `${owner}/${repo}` }));
}
