import type { SourceContext } from '../external-sources.ts';
import type { IssueState, ForgeIssueList } from './forge-issues.ts';
import { listForgeIssues } from './forge-issues.ts';
import { listForgeRepos, type ForgeRepoList } from './forge-repos.ts';
import { forgeSettings } from './forge-settings.ts';

// The forge as the operations see it: settings from the context, answers
// kept for `forge.cache_s` seconds, concurrent identical calls shared.

export function forgeRepos(ctx: SourceContext): Promise<ForgeRepoList> {
  const forge = forgeSettings(ctx.config, ctx.sources.secrets);
  return ctx.sources.forgeRepos.get('repos', () => listForgeRepos(forge));
}

export function forgeIssues(ctx: SourceContext, owner: string, repo: string, state: IssueState, limit: number): Promise<ForgeIssueList> {
  const forge = forgeSettings(ctx.config, ctx.sources.secrets);
  const key = JSON.stringify([owner, repo, state, limit]);
  return ctx.sources.forgeIssues.get(key, () => listForgeIssues(forge, owner, repo, state, limit));
}
