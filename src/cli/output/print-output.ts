import type { CliIO } from '../io.ts';
import { escapeControls } from '../safe-text.ts';
import { formatDelimited } from './format-delimited.ts';
import { isPlainObject } from './humanize.ts';
import { chooseOutput, type OutputOptions } from './output-options.ts';
import { listItems, selectFields } from './select-fields.ts';
import { terminalWidth } from './terminal-width.ts';

// Where an answer goes and in which form. stdout gets only the data: a
// list's footer (`2 items · limit: 2`) follows a table on a terminal, and
// otherwise goes to stderr when that is a terminal; a list's errors always
// reach stderr, one line each, when they are not shown on stdout.

export interface PrintSettings {
  /** Colour on a terminal, unless NO_COLOR. */
  color: boolean;
  /** The table's columns for a list (the operation's `cli.columns`). */
  columns?: readonly string[] | undefined;
}

/** Prints `body` as the options ask: JSON, YAML, TSV, CSV, or a table. */
export async function printOutput(io: CliIO, body: unknown, options: OutputOptions, settings: PrintSettings): Promise<void> {
  const choice = chooseOutput(options, io.isTTY);
  if (choice.format === 'json') {
    const out = choice.fields ? selectFields(body, choice.fields) : body;
    return void io.stdout(`${JSON.stringify(out, null, 2)}\n`);
  }
  if (choice.format === 'yaml') {
    const { stringify } = await import('yaml'); // loads only for -o yaml
    return void io.stdout(stringify(body, { lineWidth: 0, aliasDuplicateObjects: false }));
  }
  if (choice.format === 'tsv' || choice.format === 'csv') {
    if (typeof body !== 'object' || body === null) return void io.stdout(`${escapeControls(String(body))}\n`);
    const items = listItems(body) ?? [body];
    const rows = items.map((item) => (isPlainObject(item) ? item : { value: item }));
    const { allColumns } = await import('../render.ts');
    const columns = settings.columns && listItems(body) ? settings.columns : allColumns(rows);
    io.stdout(formatDelimited(choice.format, columns, rows, choice.headers));
    return footerToStderr(io, body);
  }
  const { renderParts } = await import('../render.ts'); // chalk loads only when a table is drawn
  const { text, footer } = renderParts(body, {
    color: settings.color,
    columns: settings.columns,
    wide: choice.format === 'wide',
    headers: choice.headers,
    width: io.isTTY && choice.format === 'table' ? terminalWidth(io) : undefined,
  });
  io.stdout(`${text}\n`);
  if (footer !== undefined && io.isTTY) io.stdout(`${footer}\n`);
  else footerToStderr(io, body);
}

/** A list's footer on stderr when that is a terminal; its errors (`errors`, `error`, `*_error`) there always. */
function footerToStderr(io: CliIO, body: unknown): void {
  if (!isPlainObject(body) || !Array.isArray(body.items)) return;
  const meta = Object.entries(body).filter(([k, v]) => k !== 'items' && k !== 'count' && v !== null && typeof v !== 'object' && v !== 0);
  const isError = (k: string) => k === 'error' || k.endsWith('_error');
  if (io.stderrIsTTY) {
    const n = body.items.length;
    io.stderr(`${escapeControls([`${n} item${n === 1 ? '' : 's'}`, ...meta.filter(([k]) => !isError(k)).map(([k, v]) => `${k}: ${String(v)}`)].join('  ·  '))}\n`);
  }
  for (const [k, v] of meta) if (isError(k)) io.stderr(`estate: ${escapeControls(`${k}: ${String(v)}`)}\n`);
  if (Array.isArray(body.errors)) for (const e of body.errors) io.stderr(`estate: ${escapeControls(typeof e === 'string' ? e : JSON.stringify(e))}\n`);
}
