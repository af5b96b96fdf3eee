import { el, replace } from '../dom.ts';
import { formatAge } from '../format.ts';
import { Card, type Panel, type PanelContext } from './panel.ts';

interface Completion {
  id: string;
  completed_at: string;
  board: string;
  task_id: string;
  assignee: string;
  title: string;
  duration_s?: number;
}

const SHOWN = 20;

/**
 * The work feed (GET /work/feed, public), kept live by the same stream as
 * /hq/work (GET /work/stream): each new completion goes on top.
 */
export function workPanel(): Panel {
  const card = new Card('panel-work', 'Work feed');
  const live = el('span', { class: 'live off', text: 'connecting…' });
  card.tools.append(live);
  const list = el('ol', { class: 'list feed' });
  let source: EventSource | undefined;
  let now = Date.now();

  const item = (c: Completion, fresh: boolean) =>
    el(
      'li',
      { id: `w-${c.id}`, class: fresh ? 'new' : undefined },
      el('time', { datetime: c.completed_at, title: c.completed_at, text: formatAge(c.completed_at, now) }),
      el('span', { class: 'badge s-none', text: c.board }),
      el('span', { class: 'title', text: c.title }),
      el('span', { class: 'muted small', text: `${c.assignee} · ${c.task_id}` }),
    );

  const connect = (after: string) => {
    source = new EventSource(`work/stream?after=${encodeURIComponent(after)}`);
    source.addEventListener('open', () => {
      live.textContent = 'live';
      live.className = 'live on';
    });
    source.addEventListener('error', () => {
      live.textContent = 'reconnecting…';
      live.className = 'live off';
    });
    source.addEventListener('completion', (event) => {
      let c: Completion;
      try {
        c = JSON.parse((event as MessageEvent<string>).data) as Completion;
      } catch {
        return;
      }
      if (!c?.id || document.getElementById(`w-${c.id}`)) return;
      if (list.parentElement !== card.body) replace(card.body, list);
      card.state = 'ok';
      list.prepend(item(c, true));
      while (list.children.length > SHOWN) list.lastElementChild?.remove();
    });
  };

  return {
    element: card.element,
    async refresh(ctx: PanelContext) {
      now = ctx.now;
      if (source) return;
      const page = card.take(await ctx.api.get<{ items: Completion[] }>(`work/feed?limit=${SHOWN}`));
      if (!page) return;
      replace(list, ...page.items.map((c) => item(c, false)));
      if (page.items.length) {
        card.state = 'ok';
        replace(card.body, list);
      } else card.show('empty', el('p', { class: 'muted', text: 'No completions yet.' }));
      connect(page.items[0]?.id ?? 'start');
    },
  };
}
