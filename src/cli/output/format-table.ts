// Box tables laid out to a width: columns shrink (the widest first) and cells
// are cut with an ellipsis, so a row is always one line. Widths count what the
// terminal shows: wide (CJK, emoji) characters two columns, combining marks none.

/** One cell: its plain text, and how to colour it once it is cut to width. */
export interface Cell {
  text: string;
  paint?: (text: string) => string;
}

export interface TableLayout {
  /** Header cells, or none for a table without a header (key/value tables). */
  head?: Cell[] | undefined;
  rows: Cell[][];
  /** The widest a line may be; no limit when undefined. */
  width?: number | undefined;
}

/** Narrowest a shrunk column gets: one character and the ellipsis, between its padding. */
const MIN_COLUMN = 2;
/** Header width a column keeps, if its header is that long, while data is cut. */
const MIN_HEADER = 6;

/**
 * The table as lines, none wider than `width`. When even the narrowest
 * columns do not fit, the rightmost columns are left out.
 *
 * @example
 *   drawTable({ head: [{ text: 'ts' }], rows: [[{ text: '3m ago' }]], width: 60 })
 */
export function drawTable(layout: TableLayout): string {
  const all = [...(layout.head ? [layout.head] : []), ...layout.rows];
  const count = Math.max(0, ...all.map((r) => r.length));
  let natural = Array.from({ length: count }, (_, i) => Math.max(1, ...all.map((r) => displayWidth(r[i]?.text ?? ''))));
  if (layout.width !== undefined) {
    // A line is the cell widths plus 3 per column (border and padding) plus the last border.
    const fitting = Math.max(1, Math.floor((layout.width - 1) / (MIN_COLUMN + 3)));
    natural = natural.slice(0, Math.min(count, fitting));
  }
  // Before cutting data, headers give way, down to a few characters.
  const floor = natural.map((_, i) => Math.max(MIN_COLUMN, Math.min(displayWidth(layout.head?.[i]?.text ?? ''), MIN_HEADER), ...layout.rows.map((r) => displayWidth(r[i]?.text ?? ''))));
  const widths = layout.width === undefined ? natural : fitWidths(natural, layout.width - 1 - 3 * natural.length, floor);
  const line = (cells: Cell[]) => `│${widths.map((w, i) => ` ${padCell(cells[i] ?? { text: '' }, w)} `).join('│')}│`;
  const rule = (left: string, mid: string, right: string) => `${left}${widths.map((w) => '─'.repeat(w + 2)).join(mid)}${right}`;
  const lines = [rule('┌', '┬', '┐')];
  if (layout.head) lines.push(line(layout.head), rule('├', '┼', '┤'));
  for (const row of layout.rows) lines.push(line(row));
  lines.push(rule('└', '┴', '┘'));
  return lines.join('\n');
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
