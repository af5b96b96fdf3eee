import { escapeControls } from './safe-text.ts';

/** How `estate serve` writes its log lines on stderr. */
export type LogFormat = 'json' | 'text';

export const LOG_FORMATS: readonly LogFormat[] = ['json', 'text'];

export interface ServeLogOptions {
  format: LogFormat;
  /** Leave out the access lines (one per request); warnings and errors stay. */
  quiet: boolean;
}

/**
 * The sink `estate serve` gives `createApp`: every line it receives has been
 * redacted there already (redactLogLine), so the text form shows no more
 * than the JSON one. Lines are gathered and written once per turn of the
 * event loop (a write per request cost more than the request under load);
 * `flush` writes what is pending now.
 */
export function serveLogSink(write: (text: string) => void, options: ServeLogOptions): { log: (line: Record<string, unknown>) => void; flush: () => void } {
  let pending: string[] = [];
  const flush = () => {
    const lines = pending;
    pending = [];
    if (lines.length) write(lines.join(''));
  };
  const log = (line: Record<string, unknown>) => {
    if (options.quiet && line.event === 'request') return;
    const text = options.format === 'text' ? textLogLine(line) : JSON.stringify(line);
    if (pending.push(`${text}\n`) === 1) setImmediate(flush);
  };
  return { log, flush };
}

/**
 * One log line for a person at a terminal, its controls escaped. An access
 * line is `12:03:04 GET /trends?limit=5 200 3ms alice` (local time; the user
 * only when the request carried a valid credential; `-` for no status when
 * the client left first); any other line is its time, level, event and
 * remaining fields as `key=value`.
 */
export function textLogLine(line: Record<string, unknown>): string {
  const time = clock(line.time);
  if (line.event === 'request') {
    const parts = [time, String(line.method ?? ''), String(line.path ?? ''), line.status === null || line.status === undefined ? '-' : String(line.status)];
    if (typeof line.duration_ms === 'number') parts.push(`${Math.round(line.duration_ms)}ms`);
    if (typeof line.user === 'string') parts.push(line.user);
    if (line.aborted) parts.push('(aborted)');
    return escapeControls(parts.join(' '));
  }
  const { time: _time, level, event, ...rest } = line;
  const fields = Object.entries(rest)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => `${k}=${fieldText(v)}`);
  const head = [time, String(level ?? 'info').toUpperCase(), typeof event === 'string' ? event : undefined].filter((p) => p !== undefined);
  return escapeControls([...head, ...fields].join(' '));
}

function fieldText(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return /^[^\s"=]+$/.test(text) ? text : JSON.stringify(text);
}

/** `HH:MM:SS` in local time of an ISO time (now when it is not one). */
function clock(iso: unknown): string {
  const t = typeof iso === 'string' ? new Date(iso) : new Date();
  const d = Number.isNaN(t.getTime()) ? new Date() : t;
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}
