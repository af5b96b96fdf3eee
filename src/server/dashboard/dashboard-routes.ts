import { existsSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import type { EstateContext } from '../../api/context.ts';
import { nodeName } from '../../config.ts';
import { EstateError } from '../../errors.ts';
import { projectRoot } from '../../project-root.ts';
import type { RawRoute } from '../handler.ts';
import { html } from '../html/html.ts';
import { ASSET_CACHE, body, type Body, once, PAGE_CACHE, sendBody, TYPES } from '../static-body.ts';

// The dashboard (issue 25): GET /dashboard, a page of panels that its script
// (src/dashboard/, bundled with uPlot by scripts/build-dashboard.mjs into
// dist/dashboard-assets/) fills from the API, and GET
// /dashboard/assets/{file}, that script and its stylesheet. The page is
// public; the script asks protected routes with a key the operator types
// once (kept in the tab's sessionStorage, sent as X-API-Key, never in a URL).
// Scripts, styles and connections from this origin only.

/** The dashboard's policy: everything from 'self', nothing inline, nothing from elsewhere. */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The files of dist/dashboard-assets/ that are served, and only these. */
const ASSET_FILES = ['dashboard.js', 'dashboard.css'] as const;

function assetDir(): string {
  return path.join(projectRoot(), 'dist', 'dashboard-assets');
}

/** The built assets, read once; undefined before `npm run build` made them (sources run without a build). */
const assets = once((): Record<string, Body> | undefined => {
  const dir = assetDir();
  if (!ASSET_FILES.every((f) => existsSync(path.join(dir, f)))) return undefined;
  return Object.fromEntries(
    ASSET_FILES.map((f) => {
      const file = path.join(dir, f);
      // The build's compressed forms (brotli at its highest quality, made once).
      const compressed = (ext: string) => (existsSync(`${file}${ext}`) ? readFileSync(`${file}${ext}`) : undefined);
      const made = body(TYPES[path.extname(f)] as string, readFileSync(file), true);
      return [f, { ...made, gzip: compressed('.gz'), br: compressed('.br') }];
    }),
  );
});

function builtAssets(): Record<string, Body> {
  const found = assets();
  if (!found) throw new EstateError('unavailable', 'The dashboard is not built: run npm run build');
  return found;
}

/** A versioned URL of an asset, relative to /dashboard. */
function assetUrl(file: (typeof ASSET_FILES)[number]): string {
  return `dashboard/assets/${file}?v=${(builtAssets()[file] as Body).etag.slice(1, 13)}`;
}

function dashboardPage(ctx: EstateContext): Body {
  const node = nodeName(ctx.config);
  const document = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="color-scheme" content="light dark">
<title>estate · ${node}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${assetUrl('dashboard.css')}">
</head>
<body data-node="${node}">
<div id="app"><header class="bar"><h1>estate</h1><span class="muted">${node}</span></header>
<main><noscript><p class="note">The dashboard needs JavaScript. The same data is at <a href="status">/status</a>, <a href="hq/work">/hq/work</a> and the API (<a href="api/docs">/api/docs</a>).</p></noscript></main></div>
<script src="${assetUrl('dashboard.js')}"></script>
</body>
</html>
`;
  return body('text/html; charset=utf-8', document.toString());
}

/** GET /dashboard and its assets. */
export function dashboardRoutes(ctx: EstateContext): RawRoute[] {
  const page = once(() => dashboardPage(ctx));
  const headers = { 'Content-Security-Policy': DASHBOARD_CSP, 'X-Frame-Options': 'DENY' };
  return [
    { method: 'GET', path: '/dashboard', handle: (req, res) => sendBody(req, res, page(), PAGE_CACHE, headers) },
    {
      method: 'GET',
      path: '/dashboard/assets/{file}',
      handle: (req: IncomingMessage, res: ServerResponse, params) => {
        const file = params.file ?? '';
        const found = builtAssets();
        if (!Object.hasOwn(found, file)) throw new EstateError('not_found', 'Not Found');
        sendBody(req, res, found[file] as Body, ASSET_CACHE);
      },
    },
  ];
}
