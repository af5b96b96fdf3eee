import { el, replace } from '../dom.ts';
import { formatAge } from '../format.ts';
import { Card, type Panel, type PanelContext } from './panel.ts';

interface Schedule {
  name: string;
  state: 'new' | 'up' | 'late' | 'down';
  last_checkin_at: string | null;
  last_task_id: string | null;
  next_due_at: string | null;
  last_duration_s: number | null;
  running: { task_id: string; started_at: string }[];
}

const STATE_CLASS: Record<Schedule['state'], string> = { up: 's-good', late: 's-warn', down: 's-bad', new: 's-none' };

/** The schedules of the config (GET /schedules): each one's state, last check-in, next due time and runs under way. */
export function schedulesPanel(): Panel {
  const card = new Card('panel-schedules', 'Schedules');
  return {
    element: card.element,
    async refresh(ctx: PanelContext) {
      const page = card.take(await ctx.api.get<{ items: Schedule[] }>('schedules', { needsKey: true }));
      if (!page) return;
      if (!page.items.length) {
        card.show('empty', el('p', { class: 'muted', text: 'No schedules configured (schedules in estate.config.json).' }));
        return;
      }
      card.state = 'ok';
      const when = (iso: string | null, none: string) => (iso === null ? none : formatAge(iso, ctx.now));
      replace(
        card.body,
        el(
          'ul',
          { class: 'list schedules' },
          ...page.items.map((s) =>
            el(
              'li',
              { 'data-schedule': s.name },
              el('span', { class: `badge ${STATE_CLASS[s.state]}`, text: s.state }),
              el('span', { class: 'mono', text: s.name }),
              el('span', { class: 'muted', text: `last ${when(s.last_checkin_at, 'never')}${s.last_duration_s === null ? '' : ` (${s.last_duration_s} s)`}` }),
              el('span', { class: 'muted', title: s.next_due_at ?? '', text: s.next_due_at === null ? '' : `due ${s.next_due_at.slice(0, 16).replace('T', ' ')} UTC` }),
              ...s.running.map((r) => el('span', { class: 'message muted', text: `running ${r.task_id} since ${formatAge(r.started_at, ctx.now)}` })),
            ),
          ),
        ),
      );
    },
  };
}
