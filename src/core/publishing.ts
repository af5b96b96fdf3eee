import type { JsonRecord } from './jsonl/parse-record.ts';
import type { KeyedLogSpec, KeyedWriteResult } from './keyed-log.ts';
import type { LogPage } from './record-log.ts';
import type { KeyedRecords } from './store/store.ts';

/** What a publishing tool sends to register a piece (DESIGN.md section 4). */
export interface EntryInput {
  title: string;
  slug: string;
  content_type: string;
  target_site: string;
  url?: string | null | undefined;
  summary?: string | null | undefined;
  published_at?: string | null | undefined;
}

/**
 * `publishing/entries.jsonl`: `{entry_id, title, slug, content_type, target_site,
 * url?, summary?, published_at?, registered_at}`, once per (target_site, slug);
 * `entry_id` is `pub_` + 16 hex.
 */
export const ENTRIES: KeyedLogSpec = {
  file: 'entries',
  fields: ['title', 'slug', 'content_type', 'target_site', 'url', 'summary', 'published_at'],
  required: ['title', 'slug', 'content_type', 'target_site'],
  key: ['target_site', 'slug'],
  id: { field: 'entry_id', prefix: 'pub_' },
  time: 'registered_at',
  facets: ['target_site', 'content_type'],
};

/** Registers a piece once per (target_site, slug); see KeyedRecords.write. */
export function registerEntry(entries: KeyedRecords, input: EntryInput, now: () => Date): Promise<KeyedWriteResult> {
  return entries.write(input, now);
}

/** The newest `limit` entries, newest first: all of them, or of one site or content type. */
export function latestEntries(entries: KeyedRecords, limit: number, where?: { facet: 'target_site' | 'content_type'; value: string }): Promise<LogPage> {
  return entries.newest(limit, where);
}

export function findEntry(entries: KeyedRecords, entryId: string): Promise<JsonRecord | undefined> {
  return entries.get(entryId);
}
