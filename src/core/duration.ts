import { EstateError } from '../errors.ts';

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^([1-9][0-9]{0,6})(ms|[smhd])$/;

/**
 * A positive duration written as an integer and one unit, `ms`, `s`, `m`,
 * `h` or `d` (`500ms`, `30s`, `15m`, `1h`, `7d`), in milliseconds. Anything else, or more
 * than `maxMs`, is a `usage` error (exit 2) naming `what`.
 *
 * @example parseDuration('15m', '--ttl') // 900000
 */
export function parseDuration(text: string, what: string, maxMs = 3650 * UNIT_MS.d): number {
  const m = DURATION.exec(text.trim());
  if (!m) throw new EstateError('usage', `invalid ${what} "${text}": use a whole number and a unit, like 30s, 15m, 1h or 7d`);
  const ms = Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  if (ms > maxMs) throw new EstateError('usage', `invalid ${what} "${text}": at most ${durationSpec(maxMs)}`);
  return ms;
}

/** `ms` as parseDuration reads it, in the largest whole unit that divides it: 86400000 → `1d`, 90000 → `90s`. */
export function durationSpec(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    if (ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  }
  return `${ms}ms`;
}
