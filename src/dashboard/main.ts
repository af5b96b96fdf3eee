import { Api } from './api.ts';
import { controls } from './controls.ts';
import { el } from './dom.ts';
import { currentKey } from './key.ts';
import { buildsPanel } from './panels/builds-panel.ts';
import { diskPanel } from './panels/disk-panel.ts';
import { eventsPanel } from './panels/events-panel.ts';
import { nodesPanel } from './panels/nodes-panel.ts';
import type { NodeRow, Panel, PanelContext } from './panels/panel.ts';
import { providersPanel } from './panels/providers-panel.ts';
import { schedulesPanel } from './panels/schedules-panel.ts';
import { pulsePanel } from './panels/pulse-panel.ts';
import { statusPanel } from './panels/status-panel.ts';
import { trendsPanel } from './panels/trends-panel.ts';
import { workPanel } from './panels/work-panel.ts';
import { onSchemeChange } from './theme.ts';
import { parseView, type View, viewQuery, windowOf } from './view.ts';

// The dashboard's script: the view from the URL, every panel refreshed
// together (now, on a change of view or key, and every REFRESH_MS while the
// tab is visible: unchanged data costs a 304), the work feed live.

const REFRESH_MS = 15_000;

const localNode = document.body.dataset.node ?? '';
const api = new Api(currentKey);
let view: View = parseView(location.search);

// Wide panels first (each a row of its own), then the cards that share rows.
const panels: Panel[] = [nodesPanel(), trendsPanel(), diskPanel(), pulsePanel(), statusPanel(), buildsPanel(), eventsPanel(), schedulesPanel(), providersPanel(), workPanel()];
const header = controls(
  localNode,
  (change) => setView(change),
  () => void refresh(),
  () => void refresh(),
);
const main = el('main', { class: 'grid' }, ...panels.map((p) => p.element));
const footer = el('footer', { class: 'muted small' });
(document.getElementById('app') ?? document.body).replaceChildren(header.element, main, footer);

let running: Promise<void> | undefined;
let again = false;
let timer: ReturnType<typeof setTimeout> | undefined;

function setView(change: Partial<View>): void {
  view = { ...view, ...change };
  const text = viewQuery(view);
  history.pushState(null, '', text ? `?${text}` : location.pathname);
  void refresh();
}

/** Refreshes every panel; a refresh asked for while one runs runs once after it. */
function refresh(): Promise<void> {
  if (running) {
    again = true;
    return running;
  }
  clearTimeout(timer);
  running = (async () => {
    const now = Date.now();
    const nodes = await api.get<{ items: NodeRow[] }>('nodes', { needsKey: true });
    header.keyState(nodes.kind === 'refused' ? 'refused' : currentKey() ? 'held' : 'none');
    const ctx: PanelContext = {
      api,
      view,
      window: windowOf(view, now),
      now,
      localNode,
      nodes: nodes.kind === 'ok' ? nodes.data.items : undefined,
      setView,
    };
    header.show(view, ctx.nodes);
    await Promise.all(
      panels.map((p) =>
        p.refresh(ctx).catch((err: unknown) => {
          p.element.dataset.state = 'error';
          console.warn('estate dashboard: a panel failed', err);
        }),
      ),
    );
    footer.textContent = `Updated ${new Date(now).toLocaleTimeString()} · every ${REFRESH_MS / 1000}s while shown · ${api.counts.notModified} of ${api.counts.sent} answers unchanged (304)`;
    document.documentElement.dataset.ready = 'true';
  })().finally(() => {
    running = undefined;
    if (again) {
      again = false;
      void refresh();
    } else schedule();
  });
  return running;
}

function schedule(): void {
  clearTimeout(timer);
  if (document.visibilityState === 'visible') timer = setTimeout(() => void refresh(), REFRESH_MS);
}

window.addEventListener('popstate', () => {
  view = parseView(location.search);
  void refresh();
});
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') void refresh();
  else clearTimeout(timer);
});
onSchemeChange(() => panels.forEach((p) => p.repaint?.()));
void refresh();
