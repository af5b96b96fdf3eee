import { isSharedRecord, keepSharedText, keptSharedText, sharedRecordJson } from '../core/jsonl/shared-records.ts';

/**
 * `JSON.stringify(value)`, the same bytes, faster for a page of a log's
 * newest records: a shared value (src/core/jsonl/shared-records.ts) keeps its
 * text, and an array of shared records as the answer or as one of its fields
 * is joined from the texts the records keep, so a record read again is not
 * serialised again. Anything else goes to JSON.stringify whole.
 *
 * @example
 *   jsonText({ items: page.items, count: 2 }) === JSON.stringify({ items: page.items, count: 2 })
 */
export function jsonText(value: unknown): string {
  // A shared value (a page read again) keeps its text.
  const kept = keptSharedText(value);
  if (kept !== undefined) return kept;
  const text = composedText(value);
  if (isSharedRecord(value)) keepSharedText(value as object, text);
  return text;
}

function composedText(value: unknown): string {
  if (Array.isArray(value)) return sharedArrayText(value) ?? JSON.stringify(value);
  if (!isFieldwise(value)) return JSON.stringify(value);
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  let shared = false;
  for (let i = 0; i < keys.length; i++) {
    const field = record[keys[i] as string];
    if (hasToJson(field)) return JSON.stringify(value);
    if (Array.isArray(field) && isSharedRecord(field[0])) shared = true;
  }
  if (!shared) return JSON.stringify(value);
  let text = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const field = record[key];
    let part: string | undefined;
    if (Array.isArray(field) && isSharedRecord(field[0])) {
      part = sharedArrayText(field);
      if (part === undefined) return JSON.stringify(value);
    } else part = JSON.stringify(field);
    // undefined, a function or a symbol: JSON.stringify leaves the key out.
    if (part === undefined) continue;
    text += `${text.length > 1 ? ',' : ''}${JSON.stringify(key)}:${part}`;
  }
  return `${text}}`;
}

/** An object JSON.stringify writes key by key (not an array, nor one with its own toJSON). */
function isFieldwise(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !hasToJson(value);
}

function hasToJson(value: unknown): boolean {
  return typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function';
}

/** The JSON text of an array whose every element is a shared record; undefined otherwise. */
function sharedArrayText(items: readonly unknown[]): string | undefined {
  if (items.length === 0) return undefined;
  const parts: string[] = new Array(items.length);
  for (let i = 0; i < items.length; i++) {
    const text = sharedRecordJson(items[i]);
    if (text === undefined) return undefined;
    parts[i] = text;
  }
  return `[${parts.join(',')}]`;
}
