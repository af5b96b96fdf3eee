import { el, replace } from '../dom.ts';
import { formatAge } from '../format.ts';
import { Card, type Panel, type PanelContext } from './panel.ts';

interface EstateEvent {
  ts: string;
  kind: string;
  source: string;
  subject: string;
  message: string;
}

/** The kinds that say something is wrong, and those that say it is right again. */
const BAD = /stale|down|late|unhealthy|degraded|too_fast|failure/;
const GOOD = /recovered/;

/** Events newest first (GET /events); of the view's node only when one is chosen. */
export function eventsPanel(): Panel {
  const card = new Card('panel-events', 'Events');
  return {
    element: card.element,
    async refresh(ctx: PanelContext) {
      const page = card.take(await ctx.api.get<{ items: EstateEvent[] }>('events?limit=50', { needsKey: true }));
      if (!page) return;
      const items = ctx.view.node ? page.items.filter((e) => e.subject === ctx.view.node) : page.items;
      if (!items.length) {
        card.show('empty', el('p', { class: 'muted', text: 'No events.' }));
        return;
      }
      card.state = 'ok';
      replace(
        card.body,
        el(
          'ol',
          { class: 'list events' },
          ...items.slice(0, 30).map((e) =>
            el(
              'li',
              {},
              el('time', { datetime: e.ts, title: e.ts, text: formatAge(e.ts, ctx.now) }),
              el('span', { class: `badge ${BAD.test(e.kind) ? 's-bad' : GOOD.test(e.kind) ? 's-good' : 's-none'}`, text: e.kind }),
              el('span', { class: 'message', text: e.message }),
            ),
          ),
        ),
      );
    },
  };
}
