import { nodeRuntime, type NodeRuntime } from './node-runtime.ts';
import { messageOf } from './section.ts';
import type { KeyedRecords, Tally } from './store/store.ts';

const DAY_MS = 86_400_000;

export interface AgentSummary {
  /** The completions' `assignee`. */
  name: string;
  last_activity: string | null;
  last_task: { task_id: string | null; title: string | null; board: string | null } | null;
  /** Every completion of this agent in the feed. */
  completions: number;
  completions_24h: number;
  completions_7d: number;
  /** Boards this agent completed tasks on, by name. */
  boards: string[];
}

export interface AgentList {
  /** Most recently active first. */
  items: AgentSummary[];
  count: number;
  /** What the counts cover: every completion of the feed, the earliest one's time. */
  window: { records: number; since: string | null };
  skipped_lines: number;
  /** Why the completion feed could not be read (the runtime still answers). */
  error: string | null;
  runtime: NodeRuntime;
}

/**
 * The agents known from every completion of the feed (whichever store holds
 * it; exact counts from its tally, not a window of the newest), with this
 * node's live runtime. A feed that cannot be read yields an empty list and
 * an `error`, never a failure.
 */
export async function estateAgents(completions: Pick<KeyedRecords, 'tally'>, now: Date): Promise<AgentList> {
  let tally: Tally = { count: 0, since: [0, 0], earliest: null, skipped: 0, groups: [] };
  let error: string | null = null;
  try {
    tally = await completions.tally([new Date(now.getTime() - DAY_MS), new Date(now.getTime() - 7 * DAY_MS)]);
  } catch (err) {
    error = messageOf(err, 'work/completions.jsonl');
  }
  const items = summarizeAgents(tally);
  return {
    items,
    count: items.length,
    window: { records: tally.count, since: tally.earliest },
    skipped_lines: tally.skipped,
    error,
    runtime: nodeRuntime(),
  };
}

/** One summary per agent of the tally (grouped by assignee); most recently active first. */
export function summarizeAgents(tally: Tally): AgentSummary[] {
  return tally.groups
    .map((g) => ({
      name: g.value,
      last_activity: textOf(g.newest.completed_at),
      last_task: { task_id: textOf(g.newest.task_id), title: textOf(g.newest.title), board: textOf(g.newest.board) },
      completions: g.count,
      completions_24h: g.since[0] ?? 0,
      completions_7d: g.since[1] ?? 0,
      boards: g.distinct,
    }))
    .sort((a, b) => (Date.parse(b.last_activity ?? '') || 0) - (Date.parse(a.last_activity ?? '') || 0) || a.name.localeCompare(b.name));
}

function textOf(value: unknown): string | null {
  return typeof value === 'string' && value ? value : null;
}
