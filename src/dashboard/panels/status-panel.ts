import { el, replace } from '../dom.ts';
import { formatDuration } from '../format.ts';
import { badge, Card, type Panel, type PanelContext } from './panel.ts';

interface EstateStatus {
  node: string;
  status: string;
  pulse: string;
  version: string;
  uptime_s: number;
  last_activity: string | null;
}

/** The server's own card (GET /estate/status, public): node, status, pulse, version, uptime. */
export function statusPanel(): Panel {
  const card = new Card('panel-status', 'This server');
  return {
    element: card.element,
    async refresh(ctx: PanelContext) {
      const status = card.take(await ctx.api.get<EstateStatus>('estate/status'));
      if (!status) return;
      const dl = el('dl', { class: 'facts' });
      const fact = (name: string, value: Node | string) => dl.append(el('dt', { text: name }), el('dd', {}, value));
      fact('node', status.node);
      fact('status', badge(status.status));
      fact('pulse', badge(status.pulse));
      fact('version', status.version);
      fact('uptime', formatDuration(status.uptime_s));
      card.state = 'ok';
      replace(card.body, dl);
    },
  };
}
