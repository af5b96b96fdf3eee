import type { JsonRecord } from '../jsonl/parse-record.ts';
import type { KeyedLogSpec, KeyedWriteResult, WriteExtra } from '../keyed-log.ts';
import type { KeyedRecords } from '../store/store.ts';

// The starts of runs (DESIGN.md 7c): a job says it has begun with
// `POST /work/start`; its completion, the same (board, task_id), ends the run.
// Each run is its own pair, so overlapping runs of one job pair up. The
// completion of a started run carries the start's time and its duration.

/** What a client sends to say a run has started. */
export interface StartInput {
  task_id: string;
  board: string;
  assignee?: string | null | undefined;
}

/**
 * `work/starts.jsonl`: `{id, task_id, board, assignee?, started_at}`, once per
 * (board, task_id); `id` is `ws_` + 16 hex.
 */
export const STARTS: KeyedLogSpec = {
  file: 'starts',
  fields: ['task_id', 'board', 'assignee'],
  required: ['task_id', 'board'],
  key: ['board', 'task_id'],
  id: { field: 'id', prefix: 'ws_' },
  time: 'started_at',
  facets: ['board'],
};

export type StartOutcome = KeyedWriteResult | { outcome: 'completed'; completion: JsonRecord };

/**
 * Records the start of run (board, task_id) once: `created`, `replayed` (the
 * same fields before: the stored start), `conflict` (other fields), or
 * `completed` when the run has a completion already (a start after its end
 * is refused, with that completion).
 */
export async function recordStart(starts: KeyedRecords, completions: KeyedRecords, input: StartInput, now: () => Date): Promise<StartOutcome> {
  const completion = await completions.byKey([input.board, input.task_id]);
  if (completion) return { outcome: 'completed', completion };
  return starts.write(input, now);
}

/**
 * What the completion of run (board, task_id) adds to its record when the
 * run had a start: `started_at` and `duration_s` (seconds, to the
 * millisecond). None for a run without a start, or one whose start is dated
 * after the completion (a start that raced its own completion).
 */
export async function runTiming(starts: KeyedRecords, board: string, taskId: string): Promise<WriteExtra | undefined> {
  const start = await starts.byKey([board, taskId]);
  const startedAt = typeof start?.started_at === 'string' ? start.started_at : undefined;
  const startedMs = startedAt === undefined ? Number.NaN : Date.parse(startedAt);
  if (startedAt === undefined || !Number.isFinite(startedMs)) return undefined;
  return (completedAt) => {
    const ms = completedAt.getTime() - startedMs;
    return ms < 0 ? {} : { started_at: startedAt, duration_s: ms / 1000 };
  };
}
