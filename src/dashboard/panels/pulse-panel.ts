import { query } from '../api.ts';
import { el, replace } from '../dom.ts';
import { formatTime } from '../format.ts';
import { Card, statusClass, type Panel, type PanelContext } from './panel.ts';

interface PulseEntry {
  ts: string;
  node?: string;
  status?: string;
  checks?: Record<string, unknown>;
}

/** How many of the newest pulse entries the timeline reads (GET /health/pulse's maximum). */
const ENTRIES = 1000;

/** The checks of an entry that are not healthy, as text: `disk:/ 96 (degraded)`. Both check shapes: `{status, value, message}` and a bare word. */
export function failingChecks(entry: PulseEntry): string[] {
  const failing: string[] = [];
  for (const [name, check] of Object.entries(entry.checks ?? {})) {
    if (typeof check === 'string') {
      if (!['ok', 'healthy'].includes(check)) failing.push(`${name}: ${check}`);
      continue;
    }
    if (!check || typeof check !== 'object') continue;
    const c = check as { status?: unknown; value?: unknown; message?: unknown };
    if (c.status === 'healthy' || c.status === 'ok') continue;
    const value = typeof c.value === 'number' ? ` ${Number(c.value.toFixed(1))}` : '';
    const message = typeof c.message === 'string' ? `: ${c.message}` : '';
    failing.push(`${name}${value} (${String(c.status ?? 'unknown')})${message}`);
  }
  return failing;
}

interface Run {
  from: number;
  to: number;
  status: string;
  failing: string[];
}

/** Entries (oldest first) as runs of one status and the same failing checks, each lasting until the next entry. */
function runsOf(entries: readonly PulseEntry[], end: number): Run[] {
  const times = entries.map((e) => Date.parse(e.ts));
  const gaps = times.slice(1).map((t, i) => t - (times[i] as number)).filter((g) => g > 0).sort((a, b) => a - b);
  // The last entry holds for about one interval (a node that stopped reporting shows no colour after it).
  const typical = gaps[Math.floor(gaps.length / 2)] ?? 60_000;
  const runs: Run[] = [];
  entries.forEach((e, i) => {
    const from = times[i] as number;
    const to = i + 1 < entries.length ? (times[i + 1] as number) : Math.min(end, from + typical * 1.5);
    const status = e.status ?? 'unknown';
    const failing = failingChecks(e);
    const last = runs.at(-1);
    if (last && last.status === status && last.failing.join('\n') === failing.join('\n') && last.to >= from) last.to = to;
    else runs.push({ from, to, status, failing });
  });
  return runs;
}

/**
 * The health pulse as a status timeline per node (GET /health/pulse, its
 * newest 1,000 entries): a bar per node across the window, coloured by
 * status; hovering or focusing a stretch names its failing checks.
 */
export function pulsePanel(): Panel {
  const card = new Card('panel-pulse', 'Health pulse', { wide: true });
  const caption = el('p', { class: 'pulse-caption muted small', 'aria-live': 'polite', text: 'Hover or focus a stretch to see its checks.' });
  return {
    element: card.element,
    async refresh(ctx: PanelContext) {
      const page = card.take(await ctx.api.get<{ items: PulseEntry[] }>(`health/pulse${query({ limit: ENTRIES, node: ctx.view.node })}`, { needsKey: true }));
      if (!page) return;
      const { from, to } = ctx.window;
      const byNode = new Map<string, PulseEntry[]>();
      for (const e of page.items) {
        const at = Date.parse(e.ts);
        if (Number.isNaN(at) || at >= to) continue;
        const node = e.node ?? ctx.localNode;
        let list = byNode.get(node);
        if (!list) byNode.set(node, (list = []));
        list.push(e);
      }
      if (!byNode.size) {
        card.show('empty', el('p', { class: 'muted', text: 'No pulse entries in this window.' }));
        return;
      }
      const span = to - from;
      const rows = [...byNode.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([node, newestFirst]) => {
          const entries = [...newestFirst].reverse();
          const bar = el('div', { class: 'timeline', role: 'list', 'aria-label': `Pulse of ${node}` });
          for (const run of runsOf(entries, to)) {
            if (run.to <= from) continue;
            const start = Math.max(run.from, from);
            const text = `${run.status} ${formatTime(run.from)} – ${formatTime(run.to)}${run.failing.length ? ` · ${run.failing.join(', ')}` : ''}`;
            const seg = el('span', { class: `seg s-${statusClass(run.status)}`, role: 'listitem', tabindex: 0, title: text, 'aria-label': text, 'data-status': run.status });
            seg.style.left = `${((start - from) / span) * 100}%`;
            seg.style.width = `${Math.max(0.3, ((Math.min(run.to, to) - start) / span) * 100)}%`;
            const show = () => (caption.textContent = `${node}: ${text}`);
            seg.addEventListener('mouseenter', show);
            seg.addEventListener('focus', show);
            bar.append(seg);
          }
          const latest = newestFirst[0];
          return el('div', { class: 'pulse-row' }, el('span', { class: 'mono', text: node }), bar, el('span', { class: `badge s-${statusClass(latest?.status ?? 'unknown')}`, text: latest?.status ?? 'unknown' }));
        });
      card.state = 'ok';
      const oldest = page.items.at(-1);
      const partial = page.items.length >= ENTRIES && oldest && Date.parse(oldest.ts) > from;
      replace(card.body, ...rows, caption, partial ? el('p', { class: 'muted small', text: `The newest ${ENTRIES} entries reach back to ${formatTime(oldest.ts)}.` }) : null);
    },
  };
}
