/**
 * The time of one log line, from its `ts` field (ISO 8601), in ms since the
 * epoch; undefined when the line cannot be dated: not JSON, not an object,
 * no `ts`, or a `ts` that is not a date string. Retention keeps such lines.
 *
 * @example recordTime('{"ts":"2026-01-02T03:04:05Z","v":1}') // 1767323045000
 */
export function recordTime(line: string): number | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const ts = (value as Record<string, unknown>).ts;
  if (typeof ts !== 'string') return undefined;
  const time = Date.parse(ts);
  return Number.isNaN(time) ? undefined : time;
}
