import { el, replace } from '../dom.ts';
import { Card, type Panel, type PanelContext } from './panel.ts';

interface Provider {
  name: string;
  reachable: boolean;
  latency_ms: number | null;
  error?: string | null;
}

/** Language-model providers' reachability (GET /providers, which asks each: refreshed less often than the rest). */
export function providersPanel(): Panel {
  const card = new Card('panel-providers', 'Providers');
  let last = 0;
  return {
    element: card.element,
    async refresh(ctx: PanelContext) {
      if (ctx.now - last < 55_000 && card.element.dataset.state === 'ok') return;
      last = ctx.now;
      const page = card.take(await ctx.api.get<{ items: Provider[] }>('providers', { needsKey: true }));
      if (!page) return;
      if (!page.items.length) {
        card.show('empty', el('p', { class: 'muted', text: 'No providers configured (providers in estate.config.json).' }));
        return;
      }
      card.state = 'ok';
      replace(
        card.body,
        el(
          'ul',
          { class: 'list' },
          ...page.items.map((p) =>
            el(
              'li',
              {},
              el('span', { class: `badge ${p.reachable ? 's-good' : 's-bad'}`, text: p.reachable ? 'reachable' : 'unreachable' }),
              el('span', { class: 'mono', text: p.name }),
              el('span', { class: 'muted', text: p.latency_ms === null ? '' : `${p.latency_ms} ms` }),
              p.error ? el('span', { class: 'message muted', text: p.error }) : null,
            ),
          ),
        ),
      );
    },
  };
}
