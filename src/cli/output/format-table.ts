// Box tables laid out to a width: a row is always one line. A header is
// never cut: the leading columns whose headers fit whole are shown and the
// rest are left out (the caller says so: `-o wide` shows them), as kubectl's
// tables do; a record's keys are never cut either. Cells are cut with an
// ellipsis, the widest first, and a cell keeps its first characters (up to
// KEEP_CELL, in the last column shown LAST_CELL) before a column is given up.
// Widths count what the terminal shows: wide (CJK, emoji) characters two
// columns, combining marks none.

/** One cell: its plain text, and how to colour it once it is cut to width. */
export interface Cell {
  text: string;
  paint?: (text: string) => string;
}

export interface TableLayout {
  /** Header cells, or none for a table without a header (key/value tables). */
  head?: Cell[] | undefined;
  /** false: the header decides the layout but is not drawn (`--no-headers`). */
  showHead?: boolean | undefined;
  rows: Cell[][];
  /** The widest a line may be; no limit when undefined. */
  width?: number | undefined;
}

export interface DrawnTable {
  text: string;
  /** How many columns, from the right, were left out for want of width. */
  hidden: number;
}

/** Narrowest a shrunk column gets: one character and the ellipsis, between its padding. */
const MIN_COLUMN = 2;
/** What a cell keeps of its text before a column is left out: a time (`2026-11-22 14:05`) or a name whole, the start of a title. */
const KEEP_CELL = 16;
/** What the cells of the last column shown keep at least: the start of a message. */
const LAST_CELL = 8;

/**
 * The table as lines, none wider than `width`, and how many columns it left
 * out. A headed table shows the leading columns that fit with their headers
 * whole and cells of at least KEEP_CELL characters (or their whole text, if
 * shorter), the last of them with at least LAST_CELL; a table without a
 * header (a record's keys and values) keeps its first column, the keys,
 * whole and cuts the others.
 *
 * @example
 *   drawTable({ head: [{ text: 'ts' }], rows: [[{ text: '3m ago' }]], width: 60 }).text
 */
export function drawTable(layout: TableLayout): DrawnTable {
  const { head, rows, width } = layout;
  const all = [...(head ? [head] : []), ...rows];
  const count = Math.max(0, ...all.map((r) => r.length));
  const column = (i: number) => rows.map((r) => displayWidth(r[i]?.text ?? ''));
  const headWidth = (i: number) => displayWidth(head?.[i]?.text ?? '');
  let natural = Array.from({ length: count }, (_, i) => Math.max(1, headWidth(i), ...column(i)));
  const widest = (i: number) => Math.max(0, ...column(i));
  // The least width of each column: a headed one keeps its header whole and `keep` columns of its cells;
  // without a header, the first column holds the keys (headers too) and keeps them whole.
  const least = (keep: number) => natural.map((_, i) => Math.max(MIN_COLUMN, head ? Math.max(headWidth(i), Math.min(keep, widest(i))) : i === 0 ? widest(i) : 0));
  let floor = least(KEEP_CELL);
  if (width !== undefined) {
    // A line is the cell widths plus 3 per column (border and padding) plus the last border.
    const shown = head ? fittingColumns(floor, width, least(LAST_CELL)) : Math.min(count, Math.max(1, Math.floor((width - 1) / (MIN_COLUMN + 3))));
    natural = natural.slice(0, shown);
    floor = floor.slice(0, shown);
  }
  const widths = width === undefined ? natural : fitWidths(natural, width - 1 - 3 * natural.length, floor);
  const line = (cells: Cell[]) => `│${widths.map((w, i) => ` ${padCell(cells[i] ?? { text: '' }, w)} `).join('│')}│`;
  const rule = (left: string, mid: string, right: string) => `${left}${widths.map((w) => '─'.repeat(w + 2)).join(mid)}${right}`;
  const lines = [rule('┌', '┬', '┐')];
  if (head && layout.showHead !== false) lines.push(line(head), rule('├', '┼', '┤'));
  for (const row of rows) lines.push(line(row));
  lines.push(rule('└', '┴', '┘'));
  return { text: lines.join('\n'), hidden: count - widths.length };
}

/**
 * How many leading columns fit in `width` (one at least), each at its least
 * width. The first that does not fit is still shown, as the last, when its
 * header and a few characters of its cells (LAST_CELL) fit in what is left:
 * its least width becomes that. `floor` is changed in place.
 */
function fittingColumns(floor: number[], width: number, least: readonly number[]): number {
  let used = 1;
  for (const [i, w] of floor.entries()) {
    if (i === 0 || used + w + 3 <= width) {
      used += w + 3;
      continue;
    }
    if (used + (least[i] as number) + 3 > width) return i;
    floor[i] = width - used - 3;
    return i + 1;
  }
  return floor.length;
}

/**
 * Column widths summing to at most `budget`. When `natural` does not fit but
 * `floor` (narrower: the data without long headers) does, each column gets
 * its floor and the rest is shared out towards `natural`. Otherwise columns
 * narrower than a fair share keep their floor and the others share what is
 * left equally.
 */
export function fitWidths(natural: readonly number[], budget: number, floor: readonly number[] = natural): number[] {
  const sum = (ws: readonly number[]) => ws.reduce((a, b) => a + b, 0);
  if (sum(natural) <= budget) return [...natural];
  if (sum(floor) <= budget) {
    const extra = waterFill(
      natural.map((w, i) => w - (floor[i] as number)),
      budget - sum(floor),
      0,
    );
    return floor.map((w, i) => w + (extra[i] as number));
  }
  return waterFill(floor, budget, MIN_COLUMN);
}

/** Shares `budget` out: wants under a fair share are met, the rest split equally; none below `least`. */
function waterFill(wants: readonly number[], budget: number, least: number): number[] {
  const out = [...wants];
  const order = wants.map((w, i) => [w, i] as const).sort((a, b) => a[0] - b[0]);
  let left = Math.max(budget, least * wants.length);
  order.forEach(([w, i], k) => {
    const share = Math.floor(left / (order.length - k));
    out[i] = Math.max(least, Math.min(w, share));
    left -= out[i] as number;
  });
  return out;
}

function padCell(cell: Cell, width: number): string {
  const text = truncate(cell.text, width);
  const painted = cell.paint ? cell.paint(text) : text;
  return painted + ' '.repeat(Math.max(0, width - displayWidth(text)));
}

/** `text` cut to `width` columns, ending in `…` when cut. */
export function truncate(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  let out = '';
  let used = 0;
  for (const ch of text) {
    const w = charWidth(ch);
    if (used + w > width - 1) break;
    out += ch;
    used += w;
  }
  return `${out}…`;
}

/** Columns a terminal gives `text` (no escape sequences in it). */
export function displayWidth(text: string): number {
  let width = 0;
  for (const ch of text) width += charWidth(ch);
  return width;
}

const ZERO_WIDTH = /^[\p{Mn}\p{Me}\u200b-\u200f\u2060\ufeff]$/u;
const WIDE = /^[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{1f300}-\u{1f64f}\u{1f900}-\u{1f9ff}\u{20000}-\u{3fffd}]$/u;

function charWidth(ch: string): number {
  if (ZERO_WIDTH.test(ch)) return 0;
  return WIDE.test(ch) ? 2 : 1;
}
