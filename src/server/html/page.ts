import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendText } from '../send.ts';
import { html, SafeHtml } from './html.ts';

export interface Page {
  title: string;
  body: SafeHtml;
  /** The page's stylesheet, inlined. */
  style: string;
  /** The page's script, inlined; without one, no script may run. */
  script?: string;
  /** Extra <head> markup (e.g. a refresh). */
  head?: SafeHtml;
}

/**
 * The Content-Security-Policy of estate's own pages: nothing from elsewhere,
 * inline style and script only with this response's nonce, connections
 * (the live stream) to this origin only.
 */
export function pageCsp(nonce: string, withScript: boolean): string {
  return [
    "default-src 'none'",
    `style-src 'nonce-${nonce}'`,
    withScript ? `script-src 'nonce-${nonce}'` : "script-src 'none'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Sends a self-contained HTML page (inline CSS and JS, no external assets) with a fresh nonce and a strict CSP. */
export function sendPage(req: IncomingMessage, res: ServerResponse, page: Page): void {
  const nonce = randomBytes(16).toString('base64');
  // The nonce is base64 (no quotes or angle brackets); the style and script are ours, never data.
  const style = new SafeHtml(`<style nonce="${nonce}">${page.style}</style>`);
  const script = page.script === undefined ? '' : new SafeHtml(`<script nonce="${nonce}">${page.script}</script>`);
  const document = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${page.title}</title>
${page.head ?? ''}${style}
</head>
<body>
${page.body}
${script}
</body>
</html>
`;
  sendText(req, res, 200, 'text/html; charset=utf-8', document.toString(), {
    'Content-Security-Policy': pageCsp(nonce, page.script !== undefined),
    'X-Frame-Options': 'DENY',
  });
}
