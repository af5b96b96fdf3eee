import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EstateContext } from '../../api/context.ts';
import { workFeedOp } from '../../api/operations/work.ts';
import { runOperation } from '../../api/run-operation.ts';
import type { JsonRecord } from '../../core/jsonl/parse-record.ts';
import { completionItem } from './completion-item.ts';
import { html } from './html.ts';
import { sendPage } from './page.ts';
import { PAGE_STYLE } from './page-style.ts';

/**
 * Keeps the list live: opens ../work/stream after the newest item shown (or
 * from the start when none is) and puts each new completion on top, built
 * with textContent only. Static text: no data is ever written into it.
 */
export const HQ_WORK_SCRIPT = `
(() => {
  const list = document.getElementById('feed');
  const live = document.getElementById('live');
  const empty = document.getElementById('empty');
  const max = Number(list.dataset.limit) || 50;
  const board = list.dataset.board;
  let url = '../work/stream?after=' + encodeURIComponent(list.dataset.after || 'start');
  if (board) url += '&board=' + encodeURIComponent(board);
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const shortTime = (iso) => typeof iso === 'string' && /^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d/.test(iso) ? iso.slice(0, 16).replace('T', ' ') + ' UTC' : String(iso ?? '');
  const safeHref = (u) => { try { const p = new URL(u); return p.protocol === 'http:' || p.protocol === 'https:' ? p.href : undefined; } catch { return undefined; } };
  const item = (c) => {
    const li = el('li', 'new');
    li.id = 'c-' + c.id;
    const meta = el('div', 'meta');
    const time = el('time', '', shortTime(c.completed_at));
    time.dateTime = String(c.completed_at ?? '');
    meta.append(time, el('span', 'tag', String(c.board ?? '')), el('span', 'mono', String(c.task_id ?? '')), el('span', '', String(c.assignee ?? '')));
    if (typeof c.commit_sha === 'string') meta.append(el('code', '', c.commit_sha.slice(0, 7)));
    const title = el('div', 'title');
    const href = safeHref(c.output_url);
    if (href) {
      const a = el('a', '', String(c.title ?? ''));
      a.href = href;
      a.rel = 'noopener noreferrer';
      title.append(a);
    } else title.textContent = String(c.title ?? '');
    li.append(meta, title);
    if (typeof c.summary === 'string') li.append(el('p', 'summary', c.summary));
    return li;
  };
  const source = new EventSource(url);
  source.addEventListener('open', () => { live.textContent = 'live'; live.className = 'live on'; });
  source.addEventListener('error', () => { live.textContent = 'reconnecting…'; live.className = 'live off'; });
  source.addEventListener('completion', (event) => {
    let c;
    try { c = JSON.parse(event.data); } catch { return; }
    if (!c || document.getElementById('c-' + c.id)) return;
    if (empty) empty.remove();
    list.prepend(item(c));
    while (list.children.length > max) list.lastElementChild.remove();
  });
})();
`;

/** GET /hq/work: the newest completions (`?board=`, `?limit=` as on /work/feed, default 50), updated live. */
export async function serveHqWork(ctx: EstateContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const query = Object.fromEntries(new URL(req.url ?? '/', 'http://localhost').searchParams);
  const { body } = await runOperation(workFeedOp, ctx, { query: { limit: '50', ...query } }, undefined);
  const { items, limit } = body as { items: JsonRecord[]; limit: number };
  const board = typeof query.board === 'string' ? query.board : undefined;
  const heading = board ? `Work · ${board}` : 'Work';
  sendPage(req, res, {
    title: `${heading} · estate`,
    style: PAGE_STYLE,
    script: HQ_WORK_SCRIPT,
    body: html`<header><h1>${heading}</h1><span id="live" class="live off">connecting…</span><span class="muted">newest first · <a href="../status">status</a></span></header>
<main><section>
<h2>Completed tasks</h2>
${items.length ? '' : html`<p id="empty" class="empty">No completions yet.</p>`}
<ol id="feed" class="feed" data-after="${items[0]?.id ?? ''}" data-board="${board ?? ''}" data-limit="${limit}">
${items.map(completionItem)}
</ol>
</section></main>`,
  });
}
