import { existsSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { z } from 'zod';
import type { Operation } from '../api/define-operation.ts';
import { buildOpenApi, type RouteDoc } from '../api/openapi.ts';
import { optionalSlugField } from '../api/text-fields.ts';
import { EstateError } from '../errors.ts';
import { projectRoot } from '../project-root.ts';
import type { RawRoute } from './handler.ts';
import { ASSET_CACHE, body, type Body, once, PAGE_CACHE, sendBody, TYPES } from './static-body.ts';

// The API's description and its two viewers, all served by estate itself:
//   GET /api/openapi.json            the OpenAPI 3.1 document of the operations table,
//                                    and of the seed's pages served beside it (PAGE_ROUTE_DOCS)
//   GET /api/docs, /api/redoc        Swagger UI and ReDoc pages (strict CSP, 'self' only)
//   GET /api/docs/assets/{file}      an allow-list of files of the swagger-ui-dist package
//   GET /api/redoc/assets/{file}     ReDoc's standalone bundle from the redoc package
// (both packages' files are copied into dist/docs-assets/ at build time)
// Every URL in the pages is relative, so the docs work behind a path prefix,
// and nothing is loaded from another host.

/** The Swagger UI page: scripts, styles and connections from 'self' only; images also as data: URIs. */
export const SWAGGER_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * ReDoc needs two exceptions, each tried without in Chromium: styled-components
 * injects <style> elements at run time ('unsafe-inline' styles; scripts stay 'self'),
 * and the search index runs in a blob: worker.
 */
export const REDOC_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  'worker-src blob:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Where the files of a docs viewer's package are: dist/docs-assets/<name>, where
 * scripts/build.mjs copies them (the only copy in an installed estate, which has
 * no node_modules), else the package itself (sources run before any build).
 */
function packageDir(name: string): string {
  const copied = path.join(projectRoot(), 'dist', 'docs-assets', name);
  return existsSync(copied) ? copied : path.dirname(createRequire(import.meta.url).resolve(`${name}/package.json`));
}

/**
 * A file of an npm package; `file` comes from an allow-list, never from a request.
 * `patch` rewrites its text; it must apply, so an upgrade that moves the text fails loudly.
 */
function packageFile(pkg: string, file: string, patch?: { from: string; to: string }): () => Body {
  return once(() => {
    const content = readFileSync(path.join(packageDir(pkg), file));
    const type = TYPES[path.extname(file)] ?? 'application/octet-stream';
    if (!patch) return body(type, content);
    const text = content.toString('utf8');
    if (!text.includes(patch.from)) throw new Error(`${pkg}/${file} no longer contains ${patch.from}`);
    return body(type, text.replaceAll(patch.from, patch.to));
  });
}

/** ReDoc's sidebar shows a logo from its CDN, with no option to turn it off: an empty inline image stands in. */
const REDOC_LOGO = { from: 'https://cdn.redoc.ly/redoc/logo-mini.svg', to: "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E" };

const SWAGGER_INIT = `"use strict";
window.ui = SwaggerUIBundle({
  url: new URL("openapi.json", document.baseURI).href,
  dom_id: "#swagger-ui",
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
  tryItOutEnabled: false,
  displayRequestDuration: true
});
`;

const SYSTEM_FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';

const REDOC_INIT = `"use strict";
Redoc.init(new URL("openapi.json", document.baseURI).href, {
  theme: {
    typography: {
      fontFamily: ${JSON.stringify(SYSTEM_FONT)},
      headings: { fontFamily: ${JSON.stringify(SYSTEM_FONT)} },
      code: { fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace" }
    }
  },
  expandResponses: "200,201"
}, document.getElementById("redoc"));
`;

/** `/api/docs/assets/{file}`: the only files served from there. */
const DOCS_ASSETS: Record<string, () => Body> = {
  'swagger-ui.css': packageFile('swagger-ui-dist', 'swagger-ui.css'),
  'swagger-ui-bundle.js': packageFile('swagger-ui-dist', 'swagger-ui-bundle.js'),
  'favicon-32x32.png': packageFile('swagger-ui-dist', 'favicon-32x32.png'),
  'favicon-16x16.png': packageFile('swagger-ui-dist', 'favicon-16x16.png'),
  'swagger-init.js': once(() => body(TYPES['.js'] as string, SWAGGER_INIT)),
};

/** `/api/redoc/assets/{file}`: the only files served from there. */
const REDOC_ASSETS: Record<string, () => Body> = {
  'redoc.standalone.js': packageFile('redoc', 'bundles/redoc.standalone.js', REDOC_LOGO),
  'redoc-init.js': once(() => body(TYPES['.js'] as string, REDOC_INIT)),
};

/** A versioned URL of an asset, relative to `/api/`. */
function assetUrl(dir: 'docs' | 'redoc', file: string, assets: Record<string, () => Body>): string {
  const asset = assets[file] as () => Body;
  return `${dir}/assets/${file}?v=${asset().etag.slice(1, 13)}`;
}

function page(title: string, head: string, bodyHtml: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<link rel="icon" type="image/png" href="${assetUrl('docs', 'favicon-32x32.png', DOCS_ASSETS)}" sizes="32x32">
${head}
</head>
<body>
${bodyHtml}
</body>
</html>
`;
}

const swaggerPage = once(() =>
  body(
    'text/html; charset=utf-8',
    page(
      'estate API · Swagger UI',
      `<link rel="stylesheet" href="${assetUrl('docs', 'swagger-ui.css', DOCS_ASSETS)}">`,
      `<div id="swagger-ui"></div>
<script src="${assetUrl('docs', 'swagger-ui-bundle.js', DOCS_ASSETS)}"></script>
<script src="${assetUrl('docs', 'swagger-init.js', DOCS_ASSETS)}"></script>`,
    ),
  ),
);

const redocPage = once(() =>
  body(
    'text/html; charset=utf-8',
    page(
      'estate API · ReDoc',
      '',
      `<div id="redoc"></div>
<script src="${assetUrl('redoc', 'redoc.standalone.js', REDOC_ASSETS)}"></script>
<script src="${assetUrl('redoc', 'redoc-init.js', REDOC_ASSETS)}"></script>`,
    ),
  ),
);

function assetRoute(routePath: string, assets: Record<string, () => Body>): RawRoute {
  return {
    method: 'GET',
    path: routePath,
    handle: (req, res, params) => {
      const file = params.file ?? '';
      const asset = Object.hasOwn(assets, file) ? assets[file] : undefined;
      if (!asset) throw new EstateError('not_found', 'Not Found');
      sendBody(req, res, asset(), ASSET_CACHE);
    },
  };
}

/**
 * The seed's routes that are served outside the operations table (html/page-routes.ts,
 * work-stream.ts), as the document describes them. The contract test calls each.
 */
export const PAGE_ROUTE_DOCS: readonly RouteDoc[] = [
  {
    id: 'mcp.call',
    method: 'POST',
    path: '/mcp',
    access: 'user',
    tag: 'system',
    summary: 'The Model Context Protocol (Streamable HTTP, stateless): every operation as a tool, for agents',
    description:
      'One JSON-RPC 2.0 message (or a batch) per POST, answered as JSON (`Accept: application/json, text/event-stream`, as MCP clients send); no session, so GET and DELETE answer 405. ' +
      'Its tools are the operations of this document (named by their operationId, their fields as input, their answers as `structuredContent`), plus `next_page` for answers cut at 64 KB; ' +
      'resources `estate://state/{name}`, `estate://openapi` and `estate://health`; the prompt `daily_briefing`. ' +
      'The credential decides what a request sees: the tools it may call over HTTP (a `read` key: the read tools only; none: the public ones), and whose training runs. ' +
      'An invalid credential is 403; the route is rate-limited and logged as every other. `estate mcp` speaks the same over stdio.',
    produces: 'application/json',
    errors: [400, 406],
    replies: [202],
    body: z.looseObject({ jsonrpc: z.literal('2.0'), method: z.string(), id: z.union([z.string(), z.number()]).optional(), params: z.looseObject({}).optional() }).meta({ id: 'JsonRpcRequest' }),
    output: z.looseObject({ jsonrpc: z.literal('2.0'), id: z.union([z.string(), z.number(), z.null()]) }).meta({ id: 'JsonRpcResponse' }),
  },
  {
    id: 'system.metrics',
    method: 'GET',
    path: '/metrics',
    access: 'protected',
    scope: 'metrics',
    tag: 'system',
    summary: 'Metrics for Prometheus: requests, the process, and every node\'s state',
    description:
      'The Prometheus text exposition format (`text/plain; version=0.0.4`), or OpenMetrics 1.0 when `Accept` ranks `application/openmetrics-text` first (as Prometheus does). ' +
      'Requests by route template (never the path sent), method and status class, with a latency histogram; requests in flight; 429 and 503 refusals; open event streams; ' +
      'the process, its heap, GC and event loop; per node: seconds since its last sign of life, stale or not, its pulse status, and the used share of each file system of its newest sample. ' +
      'Needs a credential with the `metrics` scope (`estate keys create --scope metrics`: it opens this route only) or `read`. A scrape reads the newest end of each node\'s records, never a whole log.',
    produces: 'text/plain',
  },
  {
    id: 'pages.status',
    method: 'GET',
    path: '/status',
    access: 'public',
    tag: 'system',
    summary: 'A simple HTML status page',
    description: 'Self-contained (no external assets), under a strict Content-Security-Policy.',
    produces: 'text/html',
  },
  {
    id: 'pages.dashboard',
    method: 'GET',
    path: '/dashboard',
    access: 'public',
    tag: 'system',
    summary: 'The dashboard: every node at a glance, charts over any range, live',
    description:
      'An HTML page whose script reads the API: nodes, trend and disk charts (`/trends/range`, `/disk/range`), the pulse timeline, builds, events, schedules, providers and the live work feed. ' +
      'The page is public; its protected panels ask for an API key, kept in the tab\'s session storage and sent as `X-API-Key`. ' +
      'Its script and styles are served from this origin, under a strict Content-Security-Policy.',
    produces: 'text/html',
    etag: true,
  },
  {
    id: 'pages.hq_work',
    method: 'GET',
    path: '/hq/work',
    access: 'public',
    tag: 'work',
    summary: 'HTML page showing the live work completion feed',
    description: 'Updates live from `GET /work/stream`.',
    produces: 'text/html',
  },
  {
    id: 'work.stream',
    method: 'GET',
    path: '/work/stream',
    access: 'public',
    tag: 'work',
    summary: 'New work completions as server-sent events',
    description:
      'Each completion is an event `completion` with the record as JSON `data` and its `id` as event id. ' +
      'Resume with `Last-Event-ID` or `?after=<id>`; `?after=start` replays the log (at most the newest 1000). ' +
      'A client (its valid credential, else its address) holds at most `serve.streams.per_client` streams: one more is **429** with `Retry-After`; ' +
      'too many streams in all is **503**. A stream ends after `serve.streams.max_lifetime_s` with an `id:` line (where to resume) and a `retry:` line: ' +
      'reconnect with `Last-Event-ID` and nothing is missed.',
    produces: 'text/event-stream',
    errors: [429, 503],
    query: z.object({
      board: optionalSlugField('Only completions of this board.'),
      after: z.string().min(1).max(128).optional().meta({ description: 'Replay the completions after this id (`start`: from the start).' }),
    }),
  },
];

/**
 * The routes of the API's description and viewers, over the same operations
 * table the router mounts (and `routes` served beside it). The document is
 * built once per process, on first use.
 */
export function docsRoutes(ops: readonly Operation[], routes: readonly RouteDoc[] = []): RawRoute[] {
  const document = once(() => body('application/json', JSON.stringify(buildOpenApi(ops, routes))));
  return [
    { method: 'GET', path: '/api/openapi.json', handle: (req, res) => sendBody(req, res, document(), PAGE_CACHE) },
    { method: 'GET', path: '/api/docs', handle: (req, res) => sendBody(req, res, swaggerPage(), PAGE_CACHE, { 'Content-Security-Policy': SWAGGER_CSP }) },
    { method: 'GET', path: '/api/redoc', handle: (req, res) => sendBody(req, res, redocPage(), PAGE_CACHE, { 'Content-Security-Policy': REDOC_CSP }) },
    assetRoute('/api/docs/assets/{file}', DOCS_ASSETS),
    assetRoute('/api/redoc/assets/{file}', REDOC_ASSETS),
  ];
}
