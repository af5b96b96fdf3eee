// Times of the range routes: the records' `ts` as PostgreSQL's series_ts_time
// reads it (migration 4), so both stores put the same records in a range.

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * The instant (ms since the epoch) of an RFC 3339 date-time (a date, `T`, a
 * time to the second, any fraction, `Z` or an offset), NaN for anything
 * else (another type, another format, a 30 February, the year 0000).
 *
 * @example rfc3339Ms('2026-11-21T13:05:00Z') // 1795093500000
 */
export function rfc3339Ms(value: unknown): number {
  if (typeof value !== 'string' || !RFC3339.test(value)) return Number.NaN;
  // Date.parse rolls a 30 February over into March: the date must be one (the pattern fixed its digits' places).
  // Year 0000 is none to PostgreSQL (its calendar goes from 1 BC to AD 1), which refuses it.
  const y = digits(value, 0, 4);
  const m = digits(value, 5, 2);
  const d = digits(value, 8, 2);
  if (y < 1 || m < 1 || m > 12 || d < 1 || d > daysIn(y, m)) return Number.NaN;
  return Date.parse(value);
}

/** The number written by the `count` ASCII digits of `text` at `at` (checked by the caller's pattern). */
function digits(text: string, at: number, count: number): number {
  let n = 0;
  for (let i = at; i < at + count; i++) n = n * 10 + text.charCodeAt(i) - 48;
  return n;
}

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The days of month `m` (1-12) of year `y`, in the proleptic Gregorian calendar Date uses. */
function daysIn(y: number, m: number): number {
  if (m !== 2) return DAYS[m - 1] as number;
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
}

const DURATION = /^([1-9][0-9]{0,6})([smhd])$/;
const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * A range bound as the routes take it: an RFC 3339 date-time, or a duration
 * back from `nowMs` (`7d`, `90m`, `30s`, `12h`). undefined when it is neither.
 */
export function rangeBoundMs(text: string, nowMs: number): number | undefined {
  const m = DURATION.exec(text);
  if (m) return nowMs - Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  const ms = rfc3339Ms(text);
  return Number.isNaN(ms) ? undefined : ms;
}
