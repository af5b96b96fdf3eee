import uPlot from 'uplot';
import { query } from './api.ts';
import type { RangeAnswer } from '../core/rollups/range-types.ts';
import type { Line } from './charts.ts';

// The answers of GET /trends/range and /disk/range (DESIGN.md 7b), and what
// the charts make of them.

/** The answer shapes are the server's own (type-only: nothing of core is bundled). */
export type { RangeAnswer, RangeItem as Bucket } from '../core/rollups/range-types.ts';

/** The path of a range read of `series` over the window. */
export function rangePath(series: 'trends' | 'disk', window: { from: number; to: number }, options: { node?: string; mount?: string; fields?: string[]; points: number }): string {
  return `${series}/range${query({
    from: new Date(window.from).toISOString(),
    to: new Date(window.to).toISOString(),
    points: options.points,
    node: options.node,
    mount: options.mount,
    fields: options.fields?.length ? options.fields.join(',') : undefined,
  })}`;
}

/** The numeric fields an answer holds, in the order first met. */
export function fieldsOf(answer: RangeAnswer): string[] {
  const seen = new Set<string>();
  for (const b of answer.items) for (const f of Object.keys(b.mean)) seen.add(f);
  return [...seen];
}

/** A table of one answer: x (seconds) and, per field, its means (and mins and maxes with `band`). */
export function lineOf(answer: RangeAnswer, field: string, label: string, band: boolean): { xs: number[]; line: Line } {
  const xs = answer.items.map((b) => Date.parse(b.ts) / 1000);
  const pick = (part: 'min' | 'mean' | 'max') => answer.items.map((b) => (typeof b[part][field] === 'number' ? (b[part][field] as number) : null));
  return { xs, line: { label, values: pick('mean'), ...(band ? { band: { min: pick('min'), max: pick('max') } } : {}) } };
}

/** Lines of different x series on one x (uPlot.join): a line has null where its answer has no bucket. */
export function joinLines(tables: readonly { xs: number[]; line: Line }[]): { xs: number[]; lines: Line[] } {
  if (!tables.length) return { xs: [], lines: [] };
  if (tables.length === 1) return { xs: (tables[0] as { xs: number[] }).xs, lines: [(tables[0] as { line: Line }).line] };
  // Each line's values, mins and maxes as series of one table, so all move to the joined x together.
  const parts = tables.map((t) => [t.xs, t.line.values, ...(t.line.band ? [t.line.band.min, t.line.band.max] : [])] as uPlot.AlignedData);
  const joined = uPlot.join(parts as uPlot.AlignedData[]);
  const xs = Array.from(joined[0] as ArrayLike<number>);
  const column = (i: number) => Array.from(joined[i] as ArrayLike<number | null | undefined>, (v) => (v === undefined ? null : v));
  let at = 1;
  const lines = tables.map((t) => {
    const values = column(at++);
    if (!t.line.band) return { label: t.line.label, values };
    const min = column(at++);
    const max = column(at++);
    return { label: t.line.label, values, band: { min, max } };
  });
  return { xs, lines };
}

/** How many buckets a chart `width` pixels wide asks for: about one per 2 px (60–1000). */
export function pointsFor(width: number): number {
  return Math.max(60, Math.min(1000, Math.floor(width / 2)));
}
