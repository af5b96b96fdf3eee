// How the dashboard writes numbers and times.

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/** `1536` → `1.5 KiB`. */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n)) return '–';
  let value = Math.abs(n);
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  const text = value >= 100 || unit === 0 ? value.toFixed(0) : value.toFixed(1);
  return `${n < 0 ? '-' : ''}${text} ${UNITS[unit]}`;
}

/** A number in at most about four significant figures: `0.123`, `12.3`, `1,234`, `1.2M`. */
export function formatNumber(n: number): string {
  if (!Number.isFinite(n)) return '–';
  const a = Math.abs(n);
  if (a >= 1e9) return `${(n / 1e9).toFixed(1)}G`;
  if (a >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (a >= 1e4) return Math.round(n).toLocaleString('en');
  if (a >= 100) return n.toFixed(0);
  if (a >= 10) return n.toFixed(1);
  return Number(n.toFixed(2)).toString();
}

export function formatPct(n: number): string {
  return Number.isFinite(n) ? `${n >= 10 ? n.toFixed(0) : n.toFixed(1)} %` : '–';
}

/** How long ago `iso` was, from `now` (ms): `40s ago`, `5m ago`, `3h 10m ago`, `4d ago`. */
export function formatAge(iso: unknown, now: number): string {
  const at = typeof iso === 'string' ? Date.parse(iso) : NaN;
  if (Number.isNaN(at)) return String(iso ?? '–');
  const s = Math.round((now - at) / 1000);
  if (s < 0) return 'just now';
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m ago`;
  return `${Math.floor(s / 86_400)}d ago`;
}

/** A time as the reader's local date and minute: `2026-12-06 13:05`. */
export function formatTime(at: number | string): string {
  const d = new Date(typeof at === 'string' ? Date.parse(at) : at);
  if (Number.isNaN(d.getTime())) return String(at);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** A length of time: `90` → `1m 30s`, `7200` → `2h`. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '–';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60 ? ` ${s % 60}s` : ''}`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60) ? ` ${Math.floor((s % 3600) / 60)}m` : ''}`;
  return `${Math.floor(s / 86_400)}d${Math.floor((s % 86_400) / 3600) ? ` ${Math.floor((s % 86_400) / 3600)}h` : ''}`;
}
