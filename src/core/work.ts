import type { JsonRecord } from './jsonl/parse-record.ts';
import { keyedLog, writeKeyed, type KeyedLogSpec, type KeyedWriteResult } from './keyed-log.ts';
import type { LogPage, RecordLog } from './record-log.ts';

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
 * output_url?, summary?, completed_at}`, once per (board, task_id); `id` is `wc_` + 16 hex.
 */
export const COMPLETIONS: KeyedLogSpec = {
  file: 'completions',
  fields: ['task_id', 'board', 'assignee', 'title', 'commit_sha', 'output_url', 'summary'],
  required: ['task_id', 'board', 'assignee', 'title'],
  key: ['board', 'task_id'],
  id: { field: 'id', prefix: 'wc_' },
  time: 'completed_at',
  facets: ['board'],
};

export function completionLog(dataDir: string): RecordLog {
  return keyedLog(dataDir, COMPLETIONS);
}

/** Records a completion once per (board, task_id); see writeKeyed. */
export function recordCompletion(log: RecordLog, input: CompletionInput, now: () => Date): Promise<KeyedWriteResult> {
  return writeKeyed(log, COMPLETIONS, input, now);
}

/** The newest `limit` completions, newest first, of one board with `board`. */
export function workFeed(log: RecordLog, limit: number, board?: string): Promise<LogPage> {
  return log.newest(limit, board === undefined ? undefined : { facet: 'board', value: board });
}

/**
 * The completions after the one with id `after` (every one, for `'start'`),
 * oldest first, at most the newest `limit`; undefined when `after` is unknown.
 */
export function completionsSince(log: RecordLog, after: string, limit: number, board?: string): Promise<JsonRecord[] | undefined> {
  return log.since(after === 'start' ? 'start' : { facet: 'id', value: after }, limit, board === undefined ? undefined : { facet: 'board', value: board });
}
