import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { JsonRecord } from '../../src/core/jsonl/parse-record.ts';
import type { AppendRequest } from '../../src/core/record-log.ts';

/** A valid work completion body; `i` makes task_id unique. */
export function completionBody(i: number | string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { task_id: `T-${i}`, board: 'ops', assignee: 'builder', title: `Task ${i}`, ...overrides };
}

/** A valid publishing register body; `i` makes the slug unique. */
export function entryBody(i: number | string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { title: `Piece ${i}`, slug: `piece-${i}`, content_type: 'note', target_site: 'garden', ...overrides };
}

/** The lines of a data dir's log (`work/completions.jsonl`), without the final empty one. */
export async function logLines(dataDir: string, log: string): Promise<string[]> {
  const text = await readFile(path.join(dataDir, log), 'utf8').catch(() => '');
  return text.split('\n').filter((l, i, all) => l !== '' || i < all.length - 1);
}

let appended = 0;
/** A record-log append of key `k`: the same when the stored record has `fields`; created with a fresh `id`. */
export function appendRequest(k: string, fields: JsonRecord = {}): AppendRequest {
  return {
    key: k,
    same: (stored) => JSON.stringify({ ...stored, id: undefined }) === JSON.stringify({ k, ...fields, id: undefined }),
    create: () => ({ k, ...fields, id: `r${++appended}` }),
  };
}
