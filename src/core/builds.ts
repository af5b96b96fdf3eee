import { dataPath } from './data-files.ts';
import { readLinesBackward } from './jsonl/read-lines-backward.ts';
import { parseRecord } from './jsonl/parse-record.ts';
import { acceptOf } from './series-records.ts';

export const BUILD_STATUSES = ['success', 'failure', 'cancelled'] as const;
type BuildStatus = (typeof BUILD_STATUSES)[number];

/** A build record: `ts`, `project` and `status` strings, and its optional fields of their types (series-records.ts). */
const isBuild = acceptOf('builds');

export interface StatusCounts {
  total: number;
  success: number;
  failure: number;
  cancelled: number;
  /** success / (success + failure), cancelled builds aside; null with no finished build. */
  success_rate: number | null;
}

export interface ProjectDigest extends StatusCounts {
  project: string;
  last_status: string;
  last_ts: string;
  avg_duration_s: number | null;
}

/** A failed build of the window, as the build log has it. */
export interface FailedBuild {
  ts: string;
  project: string;
  ref?: string;
  commit?: string;
  duration_s?: number;
}

export interface BuildDigest extends StatusCounts {
  days: number;
  since: string;
  until: string;
  by_project: ProjectDigest[];
  /** The newest failures of the window (at most MAX_RECENT_FAILURES), newest first. */
  recent_failures: FailedBuild[];
  skipped_lines: number;
}

/** How many of the window's failures a digest lists. */
export const MAX_RECENT_FAILURES = 10;

/**
 * Totals and success rates of the builds that finished in the last `days`
 * days, overall and per project (most builds first). The log is read
 * backwards and reading stops at the first build older than the window, so
 * the cost follows the window, not the log's age. A line that is not a
 * build (not a JSON object, a field missing or of the wrong type, a `ts`
 * that is not a time) is skipped and counted in `skipped_lines`.
 */
export async function buildDigest(dataDir: string, days: number, now: Date): Promise<BuildDigest> {
  const since = new Date(now.getTime() - days * 86_400_000);
  const totals = emptyCounts();
  const projects = new Map<string, ProjectDigest & { durations: number[] }>();
  const failures: FailedBuild[] = [];
  let skipped = 0;
  for await (const line of readLinesBackward(dataPath(dataDir, 'builds'))) {
    if (line !== null && !line.trim()) continue;
    const build = line === null ? undefined : parseRecord(line);
    const ts = build && isBuild(build) ? Date.parse(build.ts as string) : NaN;
    if (!build || Number.isNaN(ts)) {
      skipped++;
      continue;
    }
    if (ts < since.getTime()) break;
    if (ts > now.getTime()) continue;
    const name = build.project as string;
    const status = build.status as string;
    let project = projects.get(name);
    if (!project) {
      project = { project: name, ...emptyCounts(), last_status: status, last_ts: build.ts as string, avg_duration_s: null, durations: [] };
      projects.set(name, project);
    }
    count(totals, status);
    count(project, status);
    if (typeof build.duration_s === 'number') project.durations.push(build.duration_s);
    if (status === 'failure' && failures.length < MAX_RECENT_FAILURES) failures.push(failedBuild(build));
  }
  const byProject = [...projects.values()]
    .map(({ durations, ...p }) => ({
      ...withRate(p),
      avg_duration_s: durations.length ? Math.round(durations.reduce((a, b) => a + b, 0) / durations.length) : null,
    }))
    .sort((a, b) => b.total - a.total || a.project.localeCompare(b.project));
  return {
    days,
    since: since.toISOString(),
    until: now.toISOString(),
    ...withRate(totals),
    by_project: byProject,
    recent_failures: failures,
    skipped_lines: skipped,
  };
}

function failedBuild(build: Record<string, unknown>): FailedBuild {
  const failed: FailedBuild = { ts: build.ts as string, project: build.project as string };
  if (typeof build.ref === 'string') failed.ref = build.ref;
  if (typeof build.commit === 'string') failed.commit = build.commit;
  if (typeof build.duration_s === 'number') failed.duration_s = build.duration_s;
  return failed;
}

function emptyCounts(): StatusCounts {
  return { total: 0, success: 0, failure: 0, cancelled: 0, success_rate: null };
}

function count(c: StatusCounts, status: string): void {
  c.total++;
  if ((BUILD_STATUSES as readonly string[]).includes(status)) c[status as BuildStatus]++;
}

function withRate<T extends StatusCounts>(c: T): T {
  const finished = c.success + c.failure;
  return { ...c, success_rate: finished ? Math.round((c.success / finished) * 1000) / 1000 : null };
}
