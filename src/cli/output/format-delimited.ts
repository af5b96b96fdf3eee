import { escapeControls } from '../safe-text.ts';

// Tab- and comma-separated rows for pipes and spreadsheets: a header line
// (unless left out), then one line per row. Values are the data as it is
// (absolute times, exact numbers); objects and arrays are compact JSON, null
// is empty. Controls never pass: tabs, newlines and other controls become
// visible escapes (safe-text.ts), so one row is always one line.

export type Delimited = 'tsv' | 'csv';

/**
 * Rows as TSV (tab-separated; `\` written `\\` so escapes read back
 * unambiguously) or CSV (RFC 4180: fields with a comma, quote, or leading or
 * trailing space quoted, quotes doubled, CRLF line ends).
 *
 * @example
 *   formatDelimited('tsv', ['ts', 'node'], [{ ts: '2026-11-22T00:00:00Z', node: 'hub' }], true)
 *   // 'ts\tnode\n2026-11-22T00:00:00Z\thub\n'
 */
export function formatDelimited(format: Delimited, columns: readonly string[], rows: readonly Record<string, unknown>[], headers: boolean): string {
  // No columns (an empty list whose operation names none): nothing, not an empty header line.
  if (columns.length === 0) return '';
  const field = format === 'tsv' ? tsvField : csvField;
  const end = format === 'tsv' ? '\n' : '\r\n';
  const lines = rows.map((row) => columns.map((c) => field(plain(row[c]))).join(format === 'tsv' ? '\t' : ','));
  if (headers) lines.unshift(columns.map((c) => field(c)).join(format === 'tsv' ? '\t' : ','));
  return lines.map((l) => l + end).join('');
}

function plain(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function tsvField(text: string): string {
  return escapeControls(text.replace(/\\/g, '\\\\'));
}

function csvField(text: string): string {
  const safe = escapeControls(text);
  return /[",]|^\s|\s$/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
