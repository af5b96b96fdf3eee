import type { EstateConfig, Secrets } from '../config.ts';
import type { ForgeIssueList } from './forge/forge-issues.ts';
import type { ForgeRepoList } from './forge/forge-repos.ts';
import type { ForgeInFlight } from './forge/forge-request.ts';
import type { ProviderReport } from './providers.ts';
import type { StatsResult } from './stats.ts';
import type { Store } from './store/store.ts';
import { TtlCache } from './ttl-cache.ts';

/**
 * Per-process state for the sources estate does not own (forge, providers,
 * statistics script): the secrets they need and the caches that keep
 * dashboard polling from hammering them. Made once per server or CLI run,
 * with its context; never a module global.
 */
export interface ExternalSources {
  secrets: Secrets;
  forgeRepos: TtlCache<ForgeRepoList>;
  forgeIssues: TtlCache<ForgeIssueList>;
  /** Forge requests in flight, shared by URL across listings; nothing kept. */
  forgeInFlight: ForgeInFlight;
  providers: TtlCache<ProviderReport>;
  stats: TtlCache<StatsResult>;
}

export function createExternalSources(config: EstateConfig, secrets: Secrets): ExternalSources {
  const forgeTtlMs = (config.forge?.cache_s ?? 0) * 1000;
  return {
    secrets,
    forgeRepos: new TtlCache({ ttlMs: forgeTtlMs, maxEntries: 1 }),
    forgeIssues: new TtlCache({ ttlMs: forgeTtlMs, maxEntries: 200 }),
    forgeInFlight: new TtlCache({ ttlMs: 0 }),
    providers: new TtlCache({ ttlMs: config.providers_cache_s * 1000, maxEntries: 1 }),
    stats: new TtlCache({ ttlMs: (config.stats?.cache_s ?? 0) * 1000, maxEntries: 1 }),
  };
}

/** What the external-source readers need of the context (EstateContext has it all). */
export interface SourceContext {
  dataDir: string;
  config: EstateConfig;
  /** What estate writes (completions, published entries, the series): the aggregates read them here, whichever store it is. */
  store: Pick<Store, 'completions' | 'starts' | 'events' | 'entries' | 'series' | 'probes'>;
  sources: ExternalSources;
  now: () => Date;
}
