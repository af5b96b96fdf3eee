import { Chalk } from 'chalk';
import { type Cell, drawTable } from './output/format-table.ts';
import { humanValue, isPlainObject, nestedText } from './output/humanize.ts';
import { escapeControls } from './safe-text.ts';

// The only module that draws tables. Lists become tables, records become
// key/value tables (nested objects as dotted keys, lists of objects as their
// own tables, multi-line text such as a state file's content as a block
// below), strings print as they are. On a terminal, values read as text
// (humanize.ts) and tables fit `width`, leaving out the columns that do not
// (a list's footer, or a line below the table, says how many more `-o wide`
// shows); `wide` shows every field with values as they are. Every text that comes from data (values, keys, footers) goes
// through escapeControls.

export interface RenderOptions {
  color: boolean;
  columns?: readonly string[] | undefined;
  /** The widest a table line may be (the terminal's width); no limit when undefined. */
  width?: number | undefined;
  /** Every field, values not humanized. */
  wide?: boolean | undefined;
  /** false: tables without their header line. */
  headers?: boolean | undefined;
  /** The time relative times count from. */
  now?: Date | undefined;
}

export interface Rendered {
  text: string;
  /** A list's `N items · limit: N` line, and its errors; undefined for other answers. */
  footer?: string | undefined;
}

const MAX_AUTO_COLUMNS = 8;
/** Nesting shown as dotted keys in a record view; deeper values read as `key=value` text. */
const MAX_DEPTH = 3;

/** `body` drawn, with its footer (if any) on the last line. */
export function render(body: unknown, options: RenderOptions): string {
  const { text, footer } = renderParts(body, options);
  return footer === undefined ? text : `${text}\n${footer}`;
}

export function renderParts(body: unknown, options: RenderOptions): Rendered {
  const chalk = new Chalk({ level: options.color ? 1 : 0 });
  const now = options.now ?? new Date();
  const human = !options.wide;
  const paint = (text: string): string => {
    if (/^(ok|healthy|success|up|true)$/.test(text)) return chalk.green(text);
    if (/^(degraded|cancelled|busy|node_stale|unknown|warn|warning)$/.test(text)) return chalk.yellow(text);
    if (/^(unhealthy|failure|down|false|error|fail)$/.test(text)) return chalk.red(text);
    return text;
  };
  const leaf = (key: string, value: unknown): string => (human ? humanValue(key, value, now) : undefined) ?? String(value);
  const cell = (key: string, value: unknown): Cell => {
    if (value === null || value === undefined || (human && Array.isArray(value) && !value.length)) return { text: '-', paint: (t) => chalk.dim(t) };
    const text = typeof value === 'object' ? nestedText(value, leaf) : leaf(key, value);
    return { text: escapeControls(text.replace(/[\r\n\t]+/g, ' ')), paint };
  };
  const heading = (text: string): Cell => ({ text: escapeControls(text), paint: (t) => chalk.bold(t) });
  const table = (head: Cell[] | undefined, rows: Cell[][]) => drawTable({ head, showHead: options.headers !== false, rows, width: options.width });

  /** A list as a table, and the line saying what `-o wide` adds when columns were left out (for want of width, or past the usual ones). */
  const listView = (items: unknown[], columns?: readonly string[]): { text: string; more?: string } => {
    if (!items.length) return { text: chalk.dim('(none)') };
    if (!items.every(isPlainObject)) return { text: items.map((i) => cell('', i)).map((c) => (c.paint ? c.paint(c.text) : c.text)).join('\n') };
    const every = allColumns(items);
    const cols = options.wide ? every : (columns ?? every.slice(0, MAX_AUTO_COLUMNS));
    const drawn = table(
      cols.map(heading),
      items.map((row) => cols.map((c) => cell(c, row[c]))),
    );
    const shown = new Set(cols.slice(0, cols.length - (drawn.hidden ?? 0)));
    const more = every.filter((c) => !shown.has(c)).length;
    if (!more) return { text: drawn.text };
    return { text: drawn.text, more: `${more} more column${more === 1 ? '' : 's'}: -o wide` };
  };
  const withMore = ({ text, more }: { text: string; more?: string }) => (more ? `${text}\n${chalk.dim(more)}` : text);

  if (typeof body !== 'object' || body === null) return { text: paint(escapeControls(String(body), true)) };
  if (Array.isArray(body)) return { text: withMore(listView(body, options.columns)) };

  const record = body as Record<string, unknown>;
  if (Array.isArray(record.items)) {
    const rest = Object.entries(record).filter(([k]) => k !== 'items' && k !== 'count');
    const footer = [`${record.items.length} item${record.items.length === 1 ? '' : 's'}`];
    for (const [k, v] of rest) if (v !== null && typeof v !== 'object' && v !== 0) footer.push(escapeControls(`${k}: ${String(v)}`));
    const list = listView(record.items, options.columns);
    if (list.more) footer.push(list.more);
    if (Array.isArray(record.errors)) for (const e of record.errors) footer.push(chalk.red(escapeControls(String(e))));
    return { text: list.text, footer: chalk.dim(footer.join('  ·  ')) };
  }

  const rows: Cell[][] = [];
  const sections: string[] = [];
  const blocks: string[] = [];
  const visit = (obj: Record<string, unknown>, prefix: string, depth: number) => {
    for (const [k, value] of Object.entries(obj)) {
      const key = `${prefix}${k}`;
      const text = typeof value === 'string' ? blockText(k, value) : undefined;
      if (text !== undefined) blocks.push(`${chalk.bold(escapeControls(key))}:\n${escapeControls(text, true).replace(/\n$/, '')}`);
      else if (Array.isArray(value) && value.length && value.every(isPlainObject)) sections.push(`${chalk.bold(escapeControls(key))}\n${withMore(listView(value))}`);
      else if (isPlainObject(value) && Object.keys(value).length && depth < MAX_DEPTH) visit(value, `${key}.`, depth + 1);
      else rows.push([heading(key), cell(k, value)]);
    }
  };
  visit(record, '', 1);
  return { text: [...(rows.length ? [table(undefined, rows).text] : []), ...sections, ...blocks].join('\n') };
}

/**
 * Text shown as a block of lines rather than a cell: multi-line strings as
 * they are, and a one-line `content` holding JSON (a state file) pretty-printed.
 */
function blockText(key: string, value: string): string | undefined {
  if (value.includes('\n')) return value;
  if (key === 'content') {
    try {
      const parsed: unknown = JSON.parse(value);
      if (typeof parsed === 'object' && parsed !== null) return JSON.stringify(parsed, null, 2);
    } catch {
      // Not JSON (or cut short): the text as it is.
    }
  }
  return undefined;
}

/** Every field of the rows, in the order first seen. */
export function allColumns(rows: Record<string, unknown>[]): string[] {
  const seen = new Set<string>();
  for (const row of rows) for (const k of Object.keys(row)) seen.add(k);
  return [...seen];
}
