import type { JsonRecord } from './jsonl/parse-record.ts';
import type { KeyedLogSpec, KeyedWriteResult, WriteExtra } from './keyed-log.ts';
import type { LogPage } from './record-log.ts';
import type { KeyedRecords } from './store/store.ts';

/** What a client sends to record a completion (DESIGN.md section 4). */
export interface CompletionInput {
  task_id: string;
  board: string;
  assignee: string;
  title: string;
  commit_sha?: string | null | undefined;
  output_url?: string | null | undefined;
  summary?: string | null | undefined;
}

/**
 * `work/completions.jsonl`: `{id, task_id, board, assignee, title, commit_sha?,
 * output_url?, summary?, completed_at, started_at?, duration_s?}`, once per
 * (board, task_id); `id` is `wc_` + 16 hex; the last two for a run that had a start.
 */
export const COMPLETIONS: KeyedLogSpec = {
  file: 'completions',
  fields: ['task_id', 'board', 'assignee', 'title', 'commit_sha', 'output_url', 'summary'],
  required: ['task_id', 'board', 'assignee', 'title'],
  key: ['board', 'task_id'],
  id: { field: 'id', prefix: 'wc_' },
  time: 'completed_at',
  extra: ['started_at', 'duration_s'],
  facets: ['board'],
  tally: { by: 'assignee', distinct: 'board' },
};

/** Records a completion once per (board, task_id), with `timing`'s fields when its run had a start (runTiming); see KeyedRecords.write. */
export function recordCompletion(completions: KeyedRecords, input: CompletionInput, now: () => Date, timing?: WriteExtra): Promise<KeyedWriteResult> {
  return completions.write(input, now, timing);
}

/** The newest `limit` completions, newest first, of one board with `board`. */
export function workFeed(completions: KeyedRecords, limit: number, board?: string): Promise<LogPage> {
  return completions.newest(limit, board === undefined ? undefined : { facet: 'board', value: board });
}

/**
 * The completions after the one with id `after` (every one, for `'start'`),
 * oldest first, at most the newest `limit`; undefined when `after` is unknown.
 */
export function completionsSince(completions: KeyedRecords, after: string, limit: number, board?: string): Promise<JsonRecord[] | undefined> {
  return completions.since(after, limit, board === undefined ? undefined : { facet: 'board', value: board });
}
