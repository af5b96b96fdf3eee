import type { JsonRecord } from './jsonl/parse-record.ts';
import { nodeRuntime, type NodeRuntime } from './node-runtime.ts';
import { messageOf } from './section.ts';
import type { KeyedRecords } from './store/store.ts';

/** How many of the newest completions the agent list is built from. */
export const AGENT_WINDOW = 5000;

const DAY_MS = 86_400_000;

export interface AgentSummary {
  /** The completions' `assignee`. */
  name: string;
  last_activity: string | null;
  last_task: { task_id: string | null; title: string | null; board: string | null } | null;
  /** Completions within the window. */
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
  window: { limit: number; records: number; since: string | null };
  skipped_lines: number;
  /** Why the completion feed could not be read (the runtime still answers). */
  error: string | null;
  runtime: NodeRuntime;
}

/**
 * The agents known from the newest AGENT_WINDOW records of the completion
 * feed (whichever store holds it), with this node's live runtime. A feed
 * that cannot be read yields an empty list and an `error`, never a failure.
 */
export async function estateAgents(completions: Pick<KeyedRecords, 'newest'>, now: Date): Promise<AgentList> {
  let records: JsonRecord[] = [];
  let skipped = 0;
  let error: string | null = null;
  try {
    ({ records, skipped } = await completions.newest(AGENT_WINDOW));
  } catch (err) {
    error = messageOf(err, 'work/completions.jsonl');
  }
  const items = summarizeAgents(records, now);
  const oldest = records.at(-1);
  return {
    items,
    count: items.length,
    window: { limit: AGENT_WINDOW, records: records.length, since: oldest ? textOf(oldest.completed_at) : null },
    skipped_lines: skipped,
    error,
    runtime: nodeRuntime(),
  };
}

/** Groups completions (newest first) by assignee; most recently active first. */
export function summarizeAgents(records: readonly JsonRecord[], now: Date): AgentSummary[] {
  const agents = new Map<string, AgentSummary & { boardSet: Set<string> }>();
  for (const r of records) {
    const name = textOf(r.assignee);
    if (!name) continue;
    let agent = agents.get(name);
    if (!agent) {
      agent = {
        name,
        last_activity: textOf(r.completed_at),
        last_task: { task_id: textOf(r.task_id), title: textOf(r.title), board: textOf(r.board) },
        completions: 0,
        completions_24h: 0,
        completions_7d: 0,
        boards: [],
        boardSet: new Set(),
      };
      agents.set(name, agent);
    }
    agent.completions++;
    const age = now.getTime() - Date.parse(String(r.completed_at));
    if (age <= DAY_MS) agent.completions_24h++;
    if (age <= 7 * DAY_MS) agent.completions_7d++;
    const board = textOf(r.board);
    if (board) agent.boardSet.add(board);
  }
  return [...agents.values()]
    .map(({ boardSet, ...agent }) => ({ ...agent, boards: [...boardSet].sort() }))
    .sort((a, b) => (Date.parse(b.last_activity ?? '') || 0) - (Date.parse(a.last_activity ?? '') || 0));
}

function textOf(value: unknown): string | null {
  return typeof value === 'string' && value ? value : null;
}
