import { Chalk } from 'chalk';
import Table from 'cli-table3';

// The only module that draws for a terminal. Lists become tables, records
// become key/value tables, strings print as they are.

export interface RenderOptions {
  color: boolean;
  columns?: readonly string[] | undefined;
}

const MAX_CELL = 60;
const MAX_AUTO_COLUMNS = 8;

export function render(body: unknown, options: RenderOptions): string {
  const chalk = new Chalk({ level: options.color ? 1 : 0 });
  const paint = (text: string): string => {
    if (/^(ok|healthy|success|up|true)$/.test(text)) return chalk.green(text);
    if (/^(degraded|cancelled|busy|node_stale|unknown)$/.test(text)) return chalk.yellow(text);
    if (/^(unhealthy|failure|down|false|error)$/.test(text)) return chalk.red(text);
    return text;
  };
  const cell = (value: unknown): string => {
    if (value === null || value === undefined) return chalk.dim('-');
    const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
    const short = text.length > MAX_CELL ? `${text.slice(0, MAX_CELL - 1)}…` : text;
    return paint(short.replace(/[\r\n\t]+/g, ' '));
  };
  const table = (rows: Record<string, unknown>[], columns: readonly string[]): string => {
    const t = new Table({ head: columns.map((c) => chalk.bold(c)), style: { head: [], border: [], compact: true } });
    for (const row of rows) t.push(columns.map((c) => cell(row[c])));
    return t.toString();
  };

  if (typeof body !== 'object' || body === null) return paint(String(body));
  if (Array.isArray(body)) return listView(body, options.columns);

  const record = body as Record<string, unknown>;
  if (Array.isArray(record.items)) {
    const rest = Object.entries(record).filter(([k]) => k !== 'items' && k !== 'count');
    const footer = [`${record.items.length} item${record.items.length === 1 ? '' : 's'}`];
    for (const [k, v] of rest) if (v !== null && typeof v !== 'object' && v !== 0) footer.push(`${k}: ${v}`);
    if (Array.isArray(record.errors)) for (const e of record.errors) footer.push(chalk.red(String(e)));
    return `${listView(record.items, options.columns)}\n${chalk.dim(footer.join('  ·  '))}`;
  }

  const scalars: [string, unknown][] = [];
  const sections: string[] = [];
  for (const [key, value] of Object.entries(record)) {
    if (Array.isArray(value) && value.length && value.every(isRecord)) sections.push(`${chalk.bold(key)}\n${listView(value)}`);
    else if (isRecord(value) && Object.values(value).every((v) => typeof v !== 'object' || v === null)) {
      for (const [k, v] of Object.entries(value)) scalars.push([`${key}.${k}`, v]);
    } else scalars.push([key, value]);
  }
  const kv = new Table({ style: { head: [], border: [], compact: true } });
  for (const [k, v] of scalars) kv.push({ [chalk.bold(k)]: cell(v) });
  return [kv.toString(), ...sections].join('\n');

  function listView(items: unknown[], columns?: readonly string[]): string {
    if (!items.length) return chalk.dim('(none)');
    if (!items.every(isRecord)) return items.map((i) => cell(i)).join('\n');
    return table(items, columns ?? autoColumns(items));
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function autoColumns(rows: Record<string, unknown>[]): string[] {
  const seen = new Set<string>();
  for (const row of rows.slice(0, 20)) for (const k of Object.keys(row)) seen.add(k);
  return [...seen].slice(0, MAX_AUTO_COLUMNS);
}
