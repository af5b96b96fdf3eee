import { eventWatch, nodeName } from '../config.ts';
import { buildDigest } from './builds.ts';
import { estateEvents } from './events/estate-events.ts';
import type { SourceContext } from './external-sources.ts';
import { forgeRepos } from './forge/forge-source.ts';
import type { JsonRecord } from './jsonl/parse-record.ts';
import { providerReport } from './providers.ts';
import { statusOf } from './pulse.ts';
import { readRepoLedger } from './repo-ledger.ts';
import { settle } from './section.ts';
import { siteStats } from './stats.ts';

const DAY_MS = 86_400_000;
const DISK_WINDOW = 200;

/** A section of the summary: its fields, all null when `error` says why the source failed. */
export type Section<T> = { error: string | null } & { [K in keyof T]: T[K] | null };
/** A section of a source that may be left out of the config. */
export type OptionalSection<T> = Section<T> & { configured: boolean };

type NullFields<T> = { [K in keyof T]: null };
type Mount = { mount: string; used_pct: number | null; free_bytes: number | null; ts: string | null };

export interface Summary {
  node: string;
  generated_at: string;
  pulse: Section<{ status: string; ts: string | null }>;
  trends: Section<{ latest: JsonRecord | null }>;
  disk: Section<{ mounts: Mount[] }>;
  builds: Section<{ days: number; total: number; success: number; failure: number; cancelled: number; success_rate: number | null }>;
  events: Section<{ stale_nodes: string[]; latest: { ts: string; kind: string; subject: string; message: string }[] }>;
  work: Section<{ last_24h: number; latest: { task_id: string | null; title: string | null; assignee: string | null; board: string | null; completed_at: string | null } | null }>;
  publishing: Section<{ last_30d: number; latest: { title: string | null; content_type: string | null; target_site: string | null; ts: string | null } | null }>;
  ledger: Section<{ repos: number }>;
  forge: OptionalSection<{ repos: number; open_issues: number; archived: number }>;
  providers: OptionalSection<{ total: number; reachable: number; unreachable: string[] }>;
  stats: OptionalSection<{ data: unknown }>;
}

/**
 * One section per data source, read concurrently. A source that fails
 * (forge down, script hanging, log unreadable) sets that section's `error`
 * and nulls its fields; the others are unaffected. A source left out of the
 * config has `configured: false` and no error. The answer takes as long as
 * the slowest source, each bounded by its own timeout.
 */
export async function estateSummary(ctx: SourceContext): Promise<Summary> {
  const now = ctx.now();
  const { dataDir, config } = ctx;
  const { series } = ctx.store;
  const newest = async (log: 'trends' | 'pulse') => (await series.newest(log, 1)).items[0];
  const [pulse, trends, disk, builds, events, work, publishing, ledger, forge, providers, stats] = await Promise.all([
    sectionOf('health-pulse.jsonl', { status: null, ts: null }, async () => {
      const latest = await newest('pulse');
      return { status: statusOf(latest?.status), ts: text(latest?.ts) };
    }),
    sectionOf('trends.jsonl', { latest: null }, async () => ({ latest: (await newest('trends')) ?? null })),
    sectionOf('disk.jsonl', { mounts: null }, async () => ({ mounts: latestPerMount((await series.newest('disk', DISK_WINDOW)).items) })),
    sectionOf('builds.jsonl', { days: null, total: null, success: null, failure: null, cancelled: null, success_rate: null }, async () => {
      const d = await buildDigest(dataDir, 7, now);
      return { days: d.days, total: d.total, success: d.success, failure: d.failure, cancelled: d.cancelled, success_rate: d.success_rate };
    }),
    sectionOf('state files', { stale_nodes: null, latest: null }, async () => {
      const list = await estateEvents(ctx, 1000, config.events.stale_after_s, now, eventWatch(config));
      // A node is stale while its newest spell event (newest first) is a node_stale, not a node_recovered.
      const spell = new Map<string, string>();
      for (const e of list.items) if ((e.kind === 'node_stale' || e.kind === 'node_recovered') && !spell.has(e.subject)) spell.set(e.subject, e.kind);
      const stale = [...spell].filter(([, kind]) => kind === 'node_stale').map(([subject]) => subject);
      return { stale_nodes: stale, latest: list.items.slice(0, 5).map(({ ts, kind, subject, message }) => ({ ts, kind, subject, message })) };
    }),
    sectionOf('work/completions.jsonl', { last_24h: null, latest: null }, async () => {
      const [{ records }, tally] = await Promise.all([ctx.store.completions.newest(1), ctx.store.completions.tally([new Date(now.getTime() - DAY_MS)])]);
      const r = records[0];
      const latest = r ? { task_id: text(r.task_id), title: text(r.title), assignee: text(r.assignee), board: text(r.board), completed_at: text(r.completed_at) } : null;
      return { last_24h: tally.since[0] ?? 0, latest };
    }),
    sectionOf('publishing/entries.jsonl', { last_30d: null, latest: null }, async () => {
      const [{ records }, tally] = await Promise.all([ctx.store.entries.newest(1), ctx.store.entries.tally([new Date(now.getTime() - 30 * DAY_MS)])]);
      const r = records[0];
      const latest = r ? { title: text(r.title), content_type: text(r.content_type), target_site: text(r.target_site), ts: text(r.published_at) ?? text(r.registered_at) } : null;
      return { last_30d: tally.since[0] ?? 0, latest };
    }),
    sectionOf('repos.json', { repos: null }, async () => ({ repos: (await readRepoLedger(dataDir)).items.length })),
    optionalSection(config.forge !== undefined, 'the forge', { repos: null, open_issues: null, archived: null }, async () => {
      const list = await forgeRepos(ctx);
      const open = list.items.reduce((n, r) => n + r.open_issues, 0);
      return { repos: list.count, open_issues: open, archived: list.items.filter((r) => r.archived).length };
    }),
    optionalSection(config.providers.length > 0, 'providers', { total: null, reachable: null, unreachable: null }, async () => {
      const report = await providerReport(ctx);
      return { total: report.count, reachable: report.reachable, unreachable: report.items.filter((p) => !p.reachable).map((p) => p.name) };
    }),
    optionalSection(config.stats !== undefined, 'the statistics command', { data: null }, async () => ({ data: (await siteStats(ctx)).data })),
  ]);
  return { node: nodeName(config), generated_at: now.toISOString(), pulse, trends, disk, builds, events, work, publishing, ledger, forge, providers, stats };
}

async function sectionOf<T extends object>(what: string, empty: NullFields<T>, load: () => Promise<T>): Promise<Section<T>> {
  const settled = await settle(what, load);
  return settled.error === null ? { ...settled.value, error: null } : { ...empty, error: settled.error };
}

async function optionalSection<T extends object>(isConfigured: boolean, what: string, empty: NullFields<T>, load: () => Promise<T>): Promise<OptionalSection<T>> {
  if (!isConfigured) return { ...empty, error: null, configured: false };
  return { ...(await sectionOf(what, empty, load)), configured: true };
}

function latestPerMount(records: readonly JsonRecord[]): Mount[] {
  const seen = new Map<string, Mount>();
  for (const r of records) {
    const mount = text(r.mount);
    if (!mount || seen.has(mount)) continue;
    const total = typeof r.total_bytes === 'number' ? r.total_bytes : null;
    const used = typeof r.used_bytes === 'number' ? r.used_bytes : null;
    seen.set(mount, {
      mount,
      used_pct: total && used !== null ? Math.round((used / total) * 1000) / 10 : null,
      free_bytes: typeof r.free_bytes === 'number' ? r.free_bytes : null,
      ts: text(r.ts),
    });
  }
  return [...seen.values()].sort((a, b) => a.mount.localeCompare(b.mount));
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value ? value : null;
}
