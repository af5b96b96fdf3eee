// How a value reads in a terminal table: times as ages within a day, else
// as local times; sizes in IEC units, ratios and percentages with a `%`,
// durations in units, nested values as `key=value` text. Chosen by the
// field's name, never by guessing from text alone; `-o wide`, TSV, CSV, JSON
// and YAML keep the values as they are.

/** `ts`, `*_ts`, `*_at`, `last_activity`, `last_seen`: a time, shown as its age within a day (`5h 10m ago`), else as a local date and minute. */
const TIME_KEY = /(^|_)ts$|_at$|^last_(activity|seen)$/;
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?$/;
const BYTES_KEY = /(^|_)bytes$/;
/** Numbers already in percent (`cpu_pct`). */
const PCT_KEY = /(^|_)(pct|percent)$/;
/** Numbers in [0, 1] (`success_rate`). */
const RATIO_KEY = /(^|_)(rate|ratio)$/;
const MS_KEY = /(^|_)ms$/;
const SECONDS_KEY = /(^|_)(s|secs|seconds)$/;

/**
 * `value` of field `key` as a short text for a terminal cell, or undefined to
 * show it as it is.
 *
 * @example
 *   humanValue('used_bytes', 1288490189, now) // '1.2 GiB'
 *   humanValue('ts', '2026-11-25T13:47:00Z', new Date('2026-11-25T18:00:00Z')) // '4h 13m ago'
 */
export function humanValue(key: string, value: unknown, now: Date): string | undefined {
  if (typeof value === 'string' && TIME_KEY.test(key) && ISO_TIME.test(value)) {
    const at = Date.parse(value);
    return Number.isNaN(at) ? undefined : timeText(at, now.getTime());
  }
  if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
  if (BYTES_KEY.test(key)) return formatBytes(value);
  if (PCT_KEY.test(key)) return `${round(value)}%`;
  if (RATIO_KEY.test(key) && value >= 0 && value <= 1) return `${round(value * 100)}%`;
  if (MS_KEY.test(key)) return value < 1000 ? `${round(value)}ms` : formatDuration(value / 1000);
  if (SECONDS_KEY.test(key)) return formatDuration(value);
  return undefined;
}

const DAY_SECONDS = 86400;

/**
 * A time as a terminal shows it: within a day of `now` its age in two units
 * (`5h 10m ago`, `3m 20s ago`, `in 42s`, `just now`), so times minutes apart
 * read apart; further off the local date and minute (`2026-11-22 14:05`), as
 * `ls -l` shows an old file.
 */
export function timeText(at: number, now: number): string {
  const seconds = Math.round((now - at) / 1000);
  const span = Math.abs(seconds);
  if (span >= DAY_SECONDS) return localMinute(new Date(at));
  if (span < 5) return 'just now';
  const [big, small, unit, next] = span >= 3600 ? [Math.floor(span / 3600), Math.floor((span % 3600) / 60), 'h', 'm'] : [Math.floor(span / 60), span % 60, 'm', 's'];
  const text = big === 0 ? `${small}${next}` : small === 0 ? `${big}${unit}` : `${big}${unit} ${small}${next}`;
  return seconds > 0 ? `${text} ago` : `in ${text}`;
}

/** `2026-11-22 14:05` in the local time zone. */
function localMinute(date: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${two(date.getHours())}:${two(date.getMinutes())}`;
}

const UNITS: readonly [string, number][] = [
  ['y', 365 * 86400],
  ['mo', 30 * 86400],
  ['d', 86400],
  ['h', 3600],
  ['m', 60],
  ['s', 1],
];

/** `42s`, `3m`, `1h5m`, `12d`: two units at most. */
export function formatDuration(seconds: number): string {
  if (seconds > 0 && seconds < 1) return `${round(seconds * 1000)}ms`;
  let rest = Math.round(seconds);
  const parts: string[] = [];
  for (const [unit, size] of UNITS) {
    // Days beyond a week read better than months until two of them.
    if ((unit === 'mo' && rest < 60 * 86400) || (unit === 'y' && rest < 2 * 365 * 86400)) continue;
    if (rest < size) continue;
    parts.push(`${Math.floor(rest / size)}${unit}`);
    rest %= size;
    if (parts.length === 2) break;
  }
  return parts.join('') || '0s';
}

/** IEC units: `512 B`, `1.2 GiB`. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
  let value = Math.abs(bytes);
  let i = 0;
  while (value >= 1024 && i < units.length - 1) {
    value /= 1024;
    i++;
  }
  const text = i === 0 ? String(value) : value >= 100 ? value.toFixed(0) : value.toFixed(1).replace(/\.0$/, '');
  return `${bytes < 0 ? '-' : ''}${text} ${units[i] as string}`;
}

function round(n: number): string {
  return String(Math.round(n * 10) / 10);
}

/**
 * A nested value as one line of text: objects as `key=value` pairs (nested
 * objects dotted: `latest.ts=…`), arrays as comma-separated items, null as `-`.
 * Leaves pass through `leaf` with their own field name (for humanValue).
 *
 * @example
 *   nestedText({ db: 'ok', disk: 'warn' }) // 'db=ok, disk=warn'
 */
export function nestedText(value: unknown, leaf: (key: string, value: unknown) => string = (_k, v) => String(v)): string {
  const pairs = (obj: Record<string, unknown>, prefix: string): string[] =>
    Object.entries(obj).flatMap(([k, v]) => {
      const key = `${prefix}${k}`;
      if (isPlainObject(v)) return Object.keys(v).length ? pairs(v, `${key}.`) : [`${key}={}`];
      return [`${key}=${text(v, k)}`];
    });
  const text = (v: unknown, key: string): string => {
    if (v === null || v === undefined) return '-';
    if (Array.isArray(v)) return v.length ? v.map((item) => (isPlainObject(item) ? `{${pairs(item, '').join(', ')}}` : text(item, key))).join(', ') : '[]';
    if (isPlainObject(v)) return pairs(v, '').join(', ');
    return leaf(key, v);
  };
  return text(value, '');
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
