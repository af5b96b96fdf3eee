import { el, replace } from '../dom.ts';
import { formatAge, formatDuration, formatPct } from '../format.ts';
import { Card, type Panel, type PanelContext } from './panel.ts';

interface ProjectDigest {
  project: string;
  total: number;
  success: number;
  failure: number;
  cancelled: number;
  success_rate: number | null;
}

interface BuildDigest {
  days: number;
  total: number;
  success_rate: number | null;
  by_project: ProjectDigest[];
  recent_failures: { ts: string; project: string; ref?: string; commit?: string; duration_s?: number }[];
}

/** The view's window in whole days, as GET /builds takes it (1–365). */
export function daysOf(window: { from: number; to: number }): number {
  return Math.max(1, Math.min(365, Math.ceil((window.to - window.from) / 86_400_000)));
}

/** Builds over the window (GET /builds?days=): per project a bar of successes, failures and cancelled builds, and the newest failures. */
export function buildsPanel(): Panel {
  const card = new Card('panel-builds', 'Builds');
  return {
    element: card.element,
    async refresh(ctx: PanelContext) {
      const days = daysOf(ctx.window);
      const digest = card.take(await ctx.api.get<BuildDigest>(`builds?days=${days}`, { needsKey: true }));
      if (!digest) return;
      if (!digest.total) {
        card.show('empty', el('p', { class: 'muted', text: `No builds in the last ${days} ${days === 1 ? 'day' : 'days'}.` }));
        return;
      }
      const most = Math.max(...digest.by_project.map((p) => p.total), 1);
      const bars = digest.by_project.map((p) => {
        const bar = el('span', { class: 'stack', role: 'img', 'aria-label': `${p.project}: ${p.success} succeeded, ${p.failure} failed, ${p.cancelled} cancelled` });
        bar.style.width = `${(p.total / most) * 100}%`;
        for (const [part, n] of [['success', p.success], ['failure', p.failure], ['cancelled', p.cancelled]] as const) {
          if (!n) continue;
          const piece = el('span', { class: `part b-${part}` });
          piece.style.flexGrow = String(n);
          bar.append(piece);
        }
        return el('li', {}, el('span', { class: 'mono', text: p.project }), el('span', { class: 'track' }, bar), el('span', { class: 'num small', text: `${p.success}✓ ${p.failure}✗${p.cancelled ? ` ${p.cancelled}⊘` : ''}` }));
      });
      const failures = digest.recent_failures.map((f) =>
        el(
          'li',
          {},
          el('span', { class: 'badge s-bad', text: 'failed' }),
          el('span', { class: 'mono', text: f.project }),
          f.ref ? el('span', { class: 'muted', text: f.ref }) : null,
          f.commit ? el('code', { text: f.commit.slice(0, 7) }) : null,
          typeof f.duration_s === 'number' ? el('span', { class: 'muted', text: formatDuration(f.duration_s) }) : null,
          el('time', { datetime: f.ts, text: formatAge(f.ts, ctx.now) }),
        ),
      );
      card.state = 'ok';
      replace(
        card.body,
        el('p', { class: 'muted small', text: `${digest.total} builds in ${days} ${days === 1 ? 'day' : 'days'}${digest.success_rate === null ? '' : ` · ${formatPct(digest.success_rate * 100)} succeeded`}` }),
        el('ul', { class: 'bars' }, ...bars),
        el('h3', { text: 'Latest failures' }),
        failures.length ? el('ul', { class: 'list' }, ...failures) : el('p', { class: 'muted', text: 'None in this window.' }),
      );
    },
  };
}
