import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EstateContext } from '../../api/context.ts';
import { estateLogs } from '../../api/operations/estate-logs.ts';
import { health } from '../../api/operations/system.ts';
import { runOperation } from '../../api/run-operation.ts';
import { elapsedText } from '../../core/elapsed-text.ts';
import type { JsonRecord } from '../../core/jsonl/parse-record.ts';
import { messageOf } from '../../core/section.ts';
import { html, type SafeHtml } from './html.ts';
import { sendPage } from './page.ts';
import { PAGE_STYLE } from './page-style.ts';
import { shortTime } from './completion-item.ts';

interface Health {
  status: string;
  version: string;
  node: string;
  started_at: string;
  uptime_s: number;
  pulse: string;
  disk: { used_pct: number; free_bytes: number };
}

interface Activity {
  ts: string;
  message: string;
}

/**
 * GET /status: health, uptime, version, the latest health pulse and recent
 * activity, as a page that reloads itself every 30 s and runs no script. A
 * section whose source fails says so; the page itself still answers.
 */
export async function serveStatus(ctx: EstateContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const [healthResult, pulseResult, logsResult] = await Promise.allSettled([
    runOperation(health, ctx, {}, undefined).then((r) => r.body as Health),
    ctx.store.series.newest('pulse', 1).then((page) => page.items[0]),
    runOperation(estateLogs, ctx, { query: { limit: '10' } }, undefined).then((r) => (r.body as { items: Activity[] }).items),
  ]);
  sendPage(req, res, {
    title: 'Status · estate',
    style: PAGE_STYLE,
    head: html`<meta http-equiv="refresh" content="30">\n`,
    body: html`<header><h1>estate status</h1><span class="muted"><a href="hq/work">live work feed</a> · <a href="api/docs">API docs</a></span></header>
<main>
<section><h2>Health</h2>${settled(healthResult, healthSection)}</section>
<section><h2>Latest pulse</h2>${settled(pulseResult, pulseSection)}</section>
<section><h2>Recent activity</h2>${settled(logsResult, activitySection)}</section>
</main>`,
  });
}

function settled<T>(result: PromiseSettledResult<T>, render: (value: T) => SafeHtml): SafeHtml {
  // messageOf: an error code, never a path (the page is public).
  return result.status === 'fulfilled' ? render(result.value) : html`<p class="error">unavailable: ${messageOf(result.reason)}</p>`;
}

function healthSection(h: Health): SafeHtml {
  return html`<dl>
<dt>status</dt><dd class="${h.status}">${h.status}</dd>
<dt>node</dt><dd>${h.node}</dd>
<dt>version</dt><dd class="mono">${h.version}</dd>
<dt>uptime</dt><dd>${elapsedText(h.uptime_s * 1000)} <span class="muted">(since <time datetime="${h.started_at}">${shortTime(h.started_at)}</time>)</span></dd>
<dt>pulse</dt><dd class="${h.pulse}">${h.pulse}</dd>
<dt>disk</dt><dd>${h.disk.used_pct}% used</dd>
</dl>`;
}

function pulseSection(pulse: JsonRecord | undefined): SafeHtml {
  if (!pulse) return html`<p class="empty">No health pulse yet.</p>`;
  const status = typeof pulse.status === 'string' ? pulse.status : 'unknown';
  const checks = pulse.checks && typeof pulse.checks === 'object' && !Array.isArray(pulse.checks) ? Object.entries(pulse.checks) : [];
  return html`<dl>
<dt>status</dt><dd class="${/^(healthy|degraded|unhealthy)$/.test(status) ? status : 'unknown'}">${status}</dd>
<dt>at</dt><dd><time datetime="${pulse.ts}">${shortTime(pulse.ts)}</time></dd>
${checks.map(([name, value]) => html`<dt>${name}</dt><dd>${typeof value === 'object' ? JSON.stringify(value) : value}</dd>`)}
</dl>`;
}

function activitySection(items: Activity[]): SafeHtml {
  if (!items.length) return html`<p class="empty">No activity yet.</p>`;
  return html`<ol class="feed">${items.map((a) => html`<li><div class="meta"><time datetime="${a.ts}">${shortTime(a.ts)}</time></div><div>${a.message}</div></li>`)}</ol>`;
}
