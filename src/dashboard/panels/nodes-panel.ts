import { el, replace } from '../dom.ts';
import { formatAge, formatNumber, formatPct } from '../format.ts';
import { viewQuery } from '../view.ts';
import { badge, Card, diskLevel, type Panel, type PanelContext } from './panel.ts';

/**
 * Every node at a glance (GET /nodes), as a systems table: status, CPU,
 * memory, highest disk, load and last seen; a stale node is marked. Each
 * name opens that node's view (`?node=`).
 */
export function nodesPanel(): Panel {
  const card = new Card('panel-nodes', 'Nodes', { wide: true });
  return {
    element: card.element,
    async refresh(ctx: PanelContext) {
      if (!ctx.nodes) {
        card.take(await ctx.api.get('nodes', { needsKey: true }));
        return;
      }
      if (!ctx.nodes.length) {
        card.show('empty', el('p', { class: 'muted', text: 'No node has reported yet: run estate collect, or estate serve --collect.' }));
        return;
      }
      const head = el('tr', {}, ...['Node', 'Status', 'CPU', 'Memory', 'Disk (highest)', 'Load', 'Last seen'].map((h, i) => el('th', { scope: 'col', class: i >= 2 && i <= 5 ? 'num' : undefined, text: h })));
      const rows = ctx.nodes.map((n) => {
        const link = el('a', { href: `?${viewQuery({ ...ctx.view, node: n.name })}`, text: n.name, 'data-node': n.name });
        link.addEventListener('click', (e) => {
          if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
          e.preventDefault();
          ctx.setView({ node: n.name });
        });
        const disk = el('td', { class: `num level-${diskLevel(n.disk_used_pct)}`, text: n.disk_used_pct === null ? '–' : formatPct(n.disk_used_pct) });
        return el(
          'tr',
          { class: [n.stale ? 'stale' : '', ctx.view.node === n.name ? 'selected' : ''].filter(Boolean).join(' ') || undefined },
          el('th', { scope: 'row' }, link),
          el('td', {}, badge(n.status), n.stale ? badge('stale') : null),
          el('td', { class: 'num', text: n.cpu_pct === null ? '–' : formatPct(n.cpu_pct) }),
          el('td', { class: 'num', text: n.mem_used_pct === null ? '–' : formatPct(n.mem_used_pct) }),
          disk,
          el('td', { class: 'num', text: n.load1 === null ? '–' : formatNumber(n.load1) }),
          el('td', { text: n.last_seen ? formatAge(n.last_seen, ctx.now) : 'never' }),
        );
      });
      card.state = 'ok';
      replace(card.body, el('div', { class: 'scroll' }, el('table', { class: 'table' }, el('thead', {}, head), el('tbody', {}, ...rows))));
    },
  };
}
