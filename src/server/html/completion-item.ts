import type { JsonRecord } from '../../core/jsonl/parse-record.ts';
import { html, safeHref, type SafeHtml } from './html.ts';

/** `2026-11-21T18:48:00.000Z` → `2026-11-21 18:48 UTC` (the page script formats live items the same way). */
export function shortTime(iso: unknown): string {
  return typeof iso === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(iso) ? `${iso.slice(0, 16).replace('T', ' ')} UTC` : String(iso ?? '');
}

/** One completion as a list item; the live script of /hq/work builds the same markup with textContent. */
export function completionItem(c: JsonRecord): SafeHtml {
  const href = safeHref(c.output_url);
  const sha = typeof c.commit_sha === 'string' ? c.commit_sha.slice(0, 7) : undefined;
  return html`<li id="c-${c.id}">
<div class="meta"><time datetime="${c.completed_at}">${shortTime(c.completed_at)}</time><span class="tag">${c.board}</span><span class="mono">${c.task_id}</span><span>${c.assignee}</span>${sha === undefined ? '' : html`<code>${sha}</code>`}</div>
<div class="title">${href ? html`<a href="${href}" rel="noopener noreferrer">${c.title}</a>` : c.title}</div>
${typeof c.summary === 'string' ? html`<p class="summary">${c.summary}</p>` : ''}
</li>`;
}
