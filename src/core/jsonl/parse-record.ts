/** A JSONL record: one JSON object. */
export type JsonRecord = Record<string, unknown>;

/**
 * Parses one line as a JSON object; `undefined` for anything else (corrupt
 * JSON, a torn line from a crashed writer, an array or a scalar). Blank lines
 * are the caller's to skip.
 */
export function parseRecord(line: string): JsonRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonRecord) : undefined;
}
