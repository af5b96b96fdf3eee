import type { SourceContext } from './external-sources.ts';
import { forgeRepos } from './forge/forge-source.ts';
import type { ForgeRepo } from './forge/forge-repos.ts';
import { readRepoLedger, type LedgerRepo } from './repo-ledger.ts';
import { messageOf } from './section.ts';

export type RepoSource = 'forge' | 'ledger' | 'both';

export interface MergedRepo {
  name: string;
  /** Where this entry was found. */
  source: RepoSource;
  url: string | null;
  description: string | null;
  open_issues: number | null;
  stars: number | null;
  language: string | null;
  archived: boolean | null;
  updated_at: string | null;
}

export interface MergedRepoList {
  /** Sorted by name. */
  items: MergedRepo[];
  count: number;
  forge_configured: boolean;
  /** Why the forge's repositories are missing (unreachable, timed out…); null when they are here or not configured. */
  forge_error: string | null;
  /** Why the ledger's repositories are missing; null when they are here. */
  ledger_error: string | null;
  ledger_skipped: number;
}

/**
 * The forge's repositories merged with the ledger `repos.json` by name
 * (case-insensitive). The ledger's curated url and description win; the
 * forge adds its counts. Either side may fail alone: the other still answers,
 * with the failure in `forge_error` or `ledger_error`.
 */
export async function mergedRepos(ctx: SourceContext): Promise<MergedRepoList> {
  const forgeConfigured = ctx.config.forge !== undefined;
  const [forge, ledger] = await Promise.allSettled([
    forgeConfigured ? forgeRepos(ctx) : Promise.resolve({ items: [] as ForgeRepo[] }),
    readRepoLedger(ctx.dataDir),
  ]);
  const byName = new Map<string, MergedRepo>();
  if (ledger.status === 'fulfilled') for (const repo of ledger.value.items) byName.set(repo.name.toLowerCase(), fromLedger(repo));
  if (forge.status === 'fulfilled') {
    for (const repo of forge.value.items) {
      const key = repo.name.toLowerCase();
      const known = byName.get(key);
      byName.set(key, known ? { ...fromForge(repo), ...curated(known), source: 'both' } : fromForge(repo));
    }
  }
  const items = [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
  return {
    items,
    count: items.length,
    forge_configured: forgeConfigured,
    forge_error: forge.status === 'rejected' ? messageOf(forge.reason, 'the forge') : null,
    ledger_error: ledger.status === 'rejected' ? messageOf(ledger.reason, 'repos.json') : null,
    ledger_skipped: ledger.status === 'fulfilled' ? ledger.value.skipped : 0,
  };
}

function fromLedger(repo: LedgerRepo): MergedRepo {
  return { name: repo.name, source: 'ledger', url: repo.url, description: repo.description, open_issues: null, stars: null, language: null, archived: null, updated_at: null };
}

function fromForge(repo: ForgeRepo): MergedRepo {
  return {
    name: repo.name,
    source: 'forge',
    url: repo.url,
    description: repo.description,
    open_issues: repo.open_issues,
    stars: repo.stars,
    language: repo.language,
    archived: repo.archived,
    updated_at: repo.updated_at,
  };
}

/** The ledger's own fields that override the forge's, when set. */
function curated(repo: MergedRepo): Partial<MergedRepo> {
  const out: Partial<MergedRepo> = { name: repo.name };
  if (repo.url) out.url = repo.url;
  if (repo.description) out.description = repo.description;
  return out;
}
