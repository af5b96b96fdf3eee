import type { Answer } from '../api.ts';
import { query } from '../api.ts';
import { Chart } from '../charts.ts';
import { el, replace } from '../dom.ts';
import { formatBytes, formatPct } from '../format.ts';
import { joinLines, pointsFor, rangePath, type RangeAnswer } from '../range.ts';
import { Card, diskLevel, type Panel, type PanelContext } from './panel.ts';

interface Snapshot {
  ts: string;
  node?: string;
  mount?: string;
  total_bytes?: number;
  used_bytes?: number;
  free_bytes?: number;
}

/** Mounts charted at once: the fullest first. */
const MAX_MOUNTS = 8;

/** Used share as `df` shows it: used / (used + free) × 100. */
function usedPct(used: number | undefined, free: number | undefined): number | null {
  if (typeof used !== 'number' || typeof free !== 'number' || used + free <= 0) return null;
  return (used / (used + free)) * 100;
}

/**
 * Disk usage per mount: the latest snapshot of each (GET /disk), its used
 * share coloured past the collector's thresholds (85 %, 95 %), and the used
 * share over the window (GET /disk/range, per node and mount).
 */
export function diskPanel(): Panel {
  const card = new Card('panel-disk', 'Disk usage', { wide: true });
  const plot = el('div', { class: 'plot' });
  const figure = el('figure', { class: 'chart', 'data-chart': 'disk' }, el('div', { class: 'chart-head' }, el('figcaption', { text: 'Used share over the window' })), plot);
  let chart: Chart | undefined;
  return {
    element: card.element,
    repaint: () => chart?.repaint(),
    async refresh(ctx: PanelContext) {
      const latest = card.take(await ctx.api.get<{ items: Snapshot[] }>(`disk${query({ limit: 500, node: ctx.view.node })}`, { needsKey: true }));
      if (!latest) return;
      const mounts = new Map<string, Snapshot>();
      for (const s of latest.items) {
        if (typeof s.mount !== 'string') continue;
        const id = `${s.node ?? ''}\n${s.mount}`;
        if (!mounts.has(id)) mounts.set(id, s);
      }
      if (!mounts.size) {
        card.show('empty', el('p', { class: 'muted', text: 'No disk snapshots yet.' }));
        return;
      }
      const rows = [...mounts.values()]
        .map((s) => ({ s, pct: usedPct(s.used_bytes, s.free_bytes) }))
        .sort((a, b) => (b.pct ?? -1) - (a.pct ?? -1));
      const label = (s: Snapshot) => (ctx.view.node || !s.node ? (s.mount as string) : `${s.node}:${s.mount}`);
      const list = el(
        'ul',
        { class: 'mounts' },
        ...rows.map(({ s, pct }) => {
          const bar = el('span', { class: `fill level-${diskLevel(pct)}` });
          bar.style.width = `${Math.min(100, Math.max(0, pct ?? 0))}%`;
          return el(
            'li',
            { class: `level-${diskLevel(pct)}` },
            el('span', { class: 'mount mono', text: label(s) }),
            el('span', { class: 'meter', role: 'meter', 'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': pct === null ? undefined : pct.toFixed(1), 'aria-label': `${label(s)} used` }, bar),
            el('span', { class: 'num', text: pct === null ? '–' : formatPct(pct) }),
            el('span', { class: 'muted small', text: typeof s.used_bytes === 'number' && typeof s.total_bytes === 'number' ? `${formatBytes(s.used_bytes)} of ${formatBytes(s.total_bytes)}` : '' }),
          );
        }),
      );
      const charted = rows.slice(0, MAX_MOUNTS).map((r) => r.s);
      const points = pointsFor(Math.min(card.body.clientWidth || 600, 720));
      const answers = await Promise.all(
        charted.map((s) => ctx.api.get<RangeAnswer>(rangePath('disk', ctx.window, { node: s.node, mount: s.mount, fields: ['used_bytes', 'free_bytes'], points }), { needsKey: true })),
      );
      const failed = answers.find((a) => a.kind !== 'ok');
      if (failed) {
        card.take(failed as Answer<never>);
        return;
      }
      const tables = answers.map((a, i) => {
        const range = (a as { data: RangeAnswer }).data;
        const xs = range.items.map((b) => Date.parse(b.ts) / 1000);
        const values = range.items.map((b) => usedPct(b.mean.used_bytes, b.mean.free_bytes));
        return { xs, line: { label: label(charted[i] as Snapshot), values } };
      });
      card.state = 'ok';
      if (figure.parentElement !== card.body || card.body.firstElementChild?.tagName !== 'UL') replace(card.body, list, figure);
      else card.body.replaceChild(list, card.body.firstElementChild);
      chart ??= new Chart(plot, 'pct', (from, to) => ctx.setView({ preset: undefined, from, to }));
      chart.update(joinLines(tables.filter((t) => t.xs.length)), ctx.window);
    },
  };
}
