// Times of the range routes: the records' `ts` as PostgreSQL's series_ts_time
// reads it (migration 4), so both stores put the same records in a range.

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * The instant (ms since the epoch) of an RFC 3339 date-time (a date, `T`, a
 * time to the second, any fraction, `Z` or an offset), NaN for anything
 * else (another type, another format, a 30 February).
 *
 * @example rfc3339Ms('2026-11-21T13:05:00Z') // 1795093500000
 */
export function rfc3339Ms(value: unknown): number {
  if (typeof value !== 'string' || !RFC3339.test(value)) return Number.NaN;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) return ms;
  // Date.parse rolls a 30 February over into March: the date must read back as written.
  const [y, m, d] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  const days = new Date(Date.UTC(y, m, 0)).getUTCDate();
  return d >= 1 && d <= days && m >= 1 && m <= 12 ? ms : Number.NaN;
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
