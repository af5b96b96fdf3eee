import { parseRecord } from '../jsonl/parse-record.ts';

/**
 * The time of one log line, from its `ts` field (ISO 8601), in ms since the
 * epoch; undefined when the line cannot be dated: not JSON, not an object,
 * no `ts`, or a `ts` that is not a date string. Retention keeps such lines.
 *
 * @example recordTime('{"ts":"2026-01-02T03:04:05Z","v":1}') // 1767323045000
 */
export function recordTime(line: string): number | undefined {
  const ts = parseRecord(line)?.ts;
  if (typeof ts !== 'string') return undefined;
  const time = Date.parse(ts);
  return Number.isNaN(time) ? undefined : time;
}
