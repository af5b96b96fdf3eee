import { BUILD_STATUSES, buildDigest } from '../builds.ts';
import { readNodes } from '../hub/list-nodes.ts';
import { listSchedules, type ScheduleItem } from '../schedules/read-schedules.ts';
import type { ScheduleConfig } from '../schedules/schedule-spec.ts';
import type { KeyedRecords, Series } from '../store/store.ts';

// What estate knows of the estate, as numbers a metrics scrape reports
// (src/server/metrics/): per node, its last sign of life, its pulse and the
// used share of each file system of its newest sample. Read as `/nodes`
// reads (a few records from the newest end of each node's own), never a
// scan of a log, so a scrape costs the same on a 1 GB data dir as on a new one.

export interface NodeReading {
  node: string;
  /** Seconds from its last sign of life (heartbeat or trend point) to now; null when it never gave one. */
  lastSeenAgoS: number | null;
  stale: boolean;
  /** Its newest pulse's status (`healthy`, `degraded`, `unhealthy` from estate's collector); null when it has no pulse. */
  pulseStatus: string | null;
  /** Each file system of its newest disk sample: used / (used + free), as `df` shows it. */
  disks: { mount: string; usedRatio: number }[];
}

export interface EstateReadings {
  nodes: NodeReading[];
  /** The status of the newest pulse entry of the estate, any node's or none's (GET /health/pulse/latest); null when there is none. */
  pulseStatus: string | null;
  staleAfterS: number;
  /** Per board of the work completions: seconds since its newest completion. */
  boards: { board: string; lastCompletionAgoS: number }[];
  /** Builds of the last BUILD_WINDOW_DAYS days by status (builds.jsonl, as GET /builds reads it). */
  builds: { status: (typeof BUILD_STATUSES)[number]; count: number }[];
  /** Every schedule of the config with its state (GET /schedules), and the seconds since its newest check-in (null: none yet). */
  schedules: (ScheduleItem & { lastCheckInAgoS: number | null })[];
}

/** The window of the build counts, as `GET /builds`'s default. */
export const BUILD_WINDOW_DAYS = 7;

export async function estateReadings(
  dataDir: string,
  store: { series: Series; completions: KeyedRecords; starts: KeyedRecords },
  config: { staleAfterS: number; schedules: readonly ScheduleConfig[] },
  now: Date,
): Promise<EstateReadings> {
  const { series } = store;
  const { staleAfterS } = config;
  const [{ list, details }, newest, schedules, boards, builds] = await Promise.all([
    readNodes(series, staleAfterS, now),
    series.newest('pulse', 1),
    listSchedules(store, config.schedules, now),
    boardReadings(store.completions, now),
    buildDigest(dataDir, BUILD_WINDOW_DAYS, now),
  ]);
  const status = newest.items[0]?.status;
  const nodes = list.items.map((item): NodeReading => {
    const seen = item.last_seen === null ? Number.NaN : Date.parse(item.last_seen);
    return {
      node: item.name,
      lastSeenAgoS: Number.isFinite(seen) ? Math.max(0, (now.getTime() - seen) / 1000) : null,
      stale: item.stale,
      pulseStatus: details.get(item.name)?.pulseStatus ?? null,
      disks: usedRatios(details.get(item.name)?.disks ?? []),
    };
  });
  return {
    nodes,
    pulseStatus: typeof status === 'string' ? status : null,
    staleAfterS,
    boards,
    builds: BUILD_STATUSES.map((s) => ({ status: s, count: builds[s] })),
    schedules: schedules.items.map((s) => ({ ...s, lastCheckInAgoS: s.last_checkin_at === null ? null : Math.max(0, (now.getTime() - Date.parse(s.last_checkin_at)) / 1000) })) };
}

/** Each board of the completions (from the kept tally: the boards of each assignee) and the age of its newest completion (its index). */
async function boardReadings(completions: KeyedRecords, now: Date): Promise<{ board: string; lastCompletionAgoS: number }[]> {
  const tally = await completions.tally([]);
  const boards = [...new Set(tally.groups.flatMap((g) => g.distinct))].sort();
  const newest = await Promise.all(boards.map((board) => completions.newest(1, { facet: 'board', value: board })));
  return boards.flatMap((board, i) => {
    const at = newest[i]?.records[0]?.completed_at;
    const ms = typeof at === 'string' ? Date.parse(at) : Number.NaN;
    return Number.isFinite(ms) ? [{ board, lastCompletionAgoS: Math.max(0, (now.getTime() - ms) / 1000) }] : [];
  });
}

/** The used share of each file system of the newest sample among `newestFirst` (the snapshots with its `ts`), one per mount. */
function usedRatios(newestFirst: readonly Record<string, unknown>[]): { mount: string; usedRatio: number }[] {
  const first = newestFirst[0];
  const out = new Map<string, number>();
  for (const snapshot of newestFirst) {
    if (snapshot.ts !== first?.ts) break;
    const { mount, used_bytes: used, free_bytes: free } = snapshot;
    if (typeof mount !== 'string' || out.has(mount) || !isCount(used) || !isCount(free) || used + free === 0) continue;
    out.set(mount, used / (used + free));
  }
  return [...out].map(([mount, usedRatio]) => ({ mount, usedRatio }));
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0;
}
