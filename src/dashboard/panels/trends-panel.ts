import type { Answer } from '../api.ts';
import { Chart, type Line, type Unit } from '../charts.ts';
import { el, replace } from '../dom.ts';
import { formatDuration } from '../format.ts';
import { fieldsOf, joinLines, lineOf, pointsFor, rangePath, type RangeAnswer } from '../range.ts';
import { Card, type Panel, type PanelContext } from './panel.ts';

/** The collector's figures (DESIGN.md 7a), charted by default where the window holds them. */
/** `overview`: the fields of a group charted per node in the every-node view (a chart each). */
const GROUPS: readonly { id: string; title: string; unit: Unit; fields: readonly string[]; overview?: readonly string[] }[] = [
  { id: 'cpu', title: 'CPU', unit: 'pct', fields: ['cpu_pct'] },
  // mem_pct: the field of trend points from before the collector (the demo's).
  { id: 'memory', title: 'Memory', unit: 'pct', fields: ['mem_used_pct', 'mem_pct'] },
  { id: 'load', title: 'Load', unit: 'number', fields: ['load1', 'load5', 'load15'], overview: ['load1'] },
  { id: 'network', title: 'Network', unit: 'rate', fields: ['net_rx_bytes_s', 'net_tx_bytes_s'] },
  { id: 'diskio', title: 'Disk I/O', unit: 'rate', fields: ['disk_read_bytes_s', 'disk_write_bytes_s'] },
];
const DEFAULT_FIELDS = new Set(GROUPS.flatMap((g) => g.fields));
/** Nodes charted at once in the every-node view; the others are a click away in the nodes table. */
const MAX_NODES = 8;

/** The unit a field's name says: `_pct`, `_bytes_s`, `_bytes`, else a plain number. */
export function unitOf(field: string): Unit {
  if (field.endsWith('_pct')) return 'pct';
  if (field.endsWith('_bytes_s')) return 'rate';
  if (field.endsWith('_bytes')) return 'bytes';
  return 'number';
}

interface ChartSpec {
  id: string;
  title: string;
  unit: Unit;
  xs: number[];
  lines: Line[];
  /** A field the reader added (`fields` in the view): it can be removed. */
  extra?: string;
}

/**
 * The trend points over the view's window, from GET /trends/range: for one
 * node, a chart per group of figures (each line its mean, over its min–max
 * band); for every node, a line per node. Any other numeric field of the
 * points is a chart on demand (kept in the view's `fields`).
 */
export function trendsPanel(): Panel {
  const card = new Card('panel-trends', 'Trends', { wide: true });
  const picker = el('select', { 'aria-label': 'Chart another field' });
  const note = el('span', { class: 'muted small' });
  card.tools.append(note, picker);
  const grid = el('div', { class: 'charts' });
  const charts = new Map<string, { chart: Chart; box: HTMLElement; legend: HTMLElement }>();
  let context: PanelContext | undefined;
  picker.addEventListener('change', () => {
    const field = picker.value;
    if (context && field) context.setView({ fields: [...context.view.fields, field] });
  });

  const draw = (ctx: PanelContext, specs: ChartSpec[]) => {
    const wanted = new Set(specs.map((s) => s.id));
    for (const [id, c] of charts) {
      if (wanted.has(id)) continue;
      c.chart.destroy();
      c.box.remove();
      charts.delete(id);
    }
    if (grid.parentElement !== card.body) replace(card.body, grid);
    for (const spec of specs) {
      let entry = charts.get(spec.id);
      if (!entry) {
        const plot = el('div', { class: 'plot' });
        const legend = el('div', { class: 'chart-head' });
        const box = el('figure', { class: 'chart', 'data-chart': spec.id }, legend, plot);
        const chart = new Chart(plot, spec.unit, (from, to) => ctx.setView({ preset: undefined, from, to }));
        entry = { chart, box, legend };
        charts.set(spec.id, entry);
      }
      const remove = spec.extra
        ? el('button', { type: 'button', class: 'link', 'aria-label': `Stop charting ${spec.extra}`, text: 'remove' })
        : null;
      remove?.addEventListener('click', () => context?.setView({ fields: (context?.view.fields ?? []).filter((f) => f !== spec.extra) }));
      replace(entry.legend, el('figcaption', { text: spec.title }), remove);
      grid.append(entry.box);
      entry.chart.update({ xs: spec.xs, lines: spec.lines }, ctx.window);
    }
  };

  return {
    element: card.element,
    repaint: () => charts.forEach((c) => c.chart.repaint()),
    async refresh(ctx: PanelContext) {
      context = ctx;
      const points = pointsFor(Math.min(card.body.clientWidth || 600, 720));
      const nodes = ctx.view.node ? [ctx.view.node] : (ctx.nodes ?? []).slice(0, MAX_NODES).map((n) => n.name);
      // With no node known (an estate of other tools' points), every record together.
      const asked = nodes.length ? nodes : [undefined];
      const answers = await Promise.all(asked.map((node) => ctx.api.get<RangeAnswer>(rangePath('trends', ctx.window, { node, points }), { needsKey: true })));
      const failed = answers.find((a) => a.kind !== 'ok');
      if (failed) {
        card.take(failed as Answer<never>);
        return;
      }
      const ranges = answers.map((a) => (a as { data: RangeAnswer }).data);
      const present = new Set(ranges.flatMap(fieldsOf));
      const single = asked.length === 1;
      const label = (node: string | undefined) => node ?? 'every node';
      const specs: ChartSpec[] = [];
      for (const group of GROUPS) {
        const fields = group.fields.filter((f) => present.has(f));
        // Memory: the collector's field when there, else the older one.
        const used = group.id === 'memory' ? fields.slice(0, 1) : fields;
        if (!used.length) continue;
        if (single) {
          const range = ranges[0] as RangeAnswer;
          const tables = used.map((f) => lineOf(range, f, f, true));
          specs.push({ id: group.id, title: group.title, unit: group.unit, ...joinLines(tables) });
        } else {
          for (const f of used.filter((f) => !group.overview || group.overview.includes(f))) {
            const tables = ranges.map((r, i) => lineOf(r, f, label(asked[i]), false)).filter((t) => t.line.values.some((v) => v !== null));
            specs.push({ id: `${group.id}:${f}`, title: group.id === 'load' ? 'Load (1 min)' : used.length > 1 ? `${group.title} · ${f.replace(/_bytes_s$/, '').replace(/^(net|disk)_/, '')}` : group.title, unit: group.unit, ...joinLines(tables) });
          }
        }
      }
      for (const field of ctx.view.fields) {
        if (DEFAULT_FIELDS.has(field)) continue;
        const tables = ranges.map((r, i) => lineOf(r, field, single ? field : label(asked[i]), single)).filter((t) => t.line.values.some((v) => v !== null));
        specs.push({ id: `extra:${field}`, title: field, unit: unitOf(field), extra: field, ...joinLines(tables) });
      }
      const others = [...present].filter((f) => !DEFAULT_FIELDS.has(f) && !ctx.view.fields.includes(f)).sort();
      replace(picker, el('option', { value: '', text: others.length ? 'Chart another field…' : 'No other fields' }), ...others.map((f) => el('option', { value: f, text: f })));
      picker.disabled = !others.length;
      const first = ranges[0] as RangeAnswer;
      note.textContent = `${first.tier === 'raw' ? 'raw points' : `${first.tier} rollup`}, ${formatDuration(first.step_s)} buckets${!ctx.view.node && (ctx.nodes?.length ?? 0) > MAX_NODES ? ` · ${MAX_NODES} of ${ctx.nodes?.length} nodes` : ''}`;
      if (!specs.length) {
        for (const c of charts.values()) c.chart.destroy();
        charts.clear();
        grid.replaceChildren();
        card.show('empty', el('p', { class: 'muted', text: 'No trend points in this window.' }));
        return;
      }
      card.state = 'ok';
      draw(ctx, specs);
    },
  };
}
