import { type JsonRecord, parseRecord } from './parse-record.ts';

// The newest lines of a log are read again and again (a dashboard polling
// /trends?limit=100 reads the same hundred lines each time): each is parsed
// once here, by its text, and its record shared by the reads that meet the
// same text again. Keyed by the whole text of the line, so a line that
// changes is a new entry: a read never sees a record other than its line's.
// Shared records are frozen, deeply: a reader that tries to change one
// throws rather than changing what other readers see.

/** At most this many lines are remembered (the oldest entries go first), each at most MAX_SHARED_LINE characters. */
const MAX_ENTRIES = 8192;
const MAX_SHARED_LINE = 4096;

const records = new Map<string, JsonRecord | null>();

/** Shared records → their JSON text ('' until asked). */
const texts = new WeakMap<object, string>();

/**
 * `parseRecord(line)`, from the shared records when the line was met before;
 * the record is frozen and may be shared with other readers.
 */
export function parseSharedRecord(line: string): JsonRecord | undefined {
  const known = records.get(line);
  if (known !== undefined) return known ?? undefined;
  const record = parseRecord(line);
  if (record !== undefined) {
    // Frozen whatever its length: a long one is not kept here, but its reader may still share it.
    deepFreeze(record);
    texts.set(record, '');
  }
  if (line.length > MAX_SHARED_LINE) return record;
  records.set(line, record ?? null);
  if (records.size > MAX_ENTRIES) records.delete(records.keys().next().value as string);
  return record;
}

/**
 * Makes `value` shared like a record of parseSharedRecord: frozen, deeply,
 * and keeping its JSON text once asked (a page of shared records, sent again
 * and again). Returns it.
 */
export function shareValue<T extends object>(value: T): T {
  deepFreeze(value);
  if (!texts.has(value)) texts.set(value, '');
  return value;
}

/** Whether `value` is a shared record (see parseSharedRecord) or value (shareValue). */
export function isSharedRecord(value: unknown): boolean {
  return typeof value === 'object' && value !== null && texts.has(value);
}

/**
 * `JSON.stringify(value)` of a shared record, serialised once and kept;
 * undefined for any other value (whose text may change with it).
 */
export function sharedRecordJson(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const text = texts.get(value);
  if (text === undefined || text !== '') return text;
  const json = JSON.stringify(value);
  texts.set(value, json);
  return json;
}

/** The JSON text a shared value keeps, once kept (see keepSharedText); undefined before, or for any other value. */
export function keptSharedText(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const text = texts.get(value);
  return text === '' ? undefined : text;
}

/** Keeps `text`, which must be `JSON.stringify(value)`, as the text of the shared `value` (a page whose text was joined from its records'). */
export function keepSharedText(value: object, text: string): void {
  if (texts.get(value) === '') texts.set(value, text);
}

function deepFreeze(value: object): void {
  Object.freeze(value);
  for (const key in value) {
    const child = (value as Record<string, unknown>)[key];
    if (typeof child === 'object' && child !== null && !Object.isFrozen(child)) deepFreeze(child);
  }
}
