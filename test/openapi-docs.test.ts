import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import { REDOC_CSP, SWAGGER_CSP } from '../src/server/docs-routes.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { startServer } from './helpers/server.ts';

// /api/docs and /api/redoc over HTTP: pages, assets from the npm packages,
// caching, and the allow-list. The browser test renders them.

const require = createRequire(import.meta.url);
const packageFile = (pkg: string, file: string) => readFile(path.join(path.dirname(require.resolve(`${pkg}/package.json`)), file));

/** The `src`/`href` URLs of a page. */
function links(html: string): string[] {
  return [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
}

test('the docs pages reference only estate-served, versioned assets, under a strict CSP', async (t) => {
  const server = await startServer(t, await tempDataDir(t));
  const cases = [
    { page: '/api/docs', csp: SWAGGER_CSP, assets: ['docs/assets/swagger-ui.css', 'docs/assets/swagger-ui-bundle.js', 'docs/assets/swagger-init.js'] },
    { page: '/api/redoc', csp: REDOC_CSP, assets: ['redoc/assets/redoc.standalone.js', 'redoc/assets/redoc-init.js'] },
  ];
  for (const c of cases) {
    await t.test(c.page, async () => {
      const r = await server.get(c.page);
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-type'), 'text/html; charset=utf-8');
      assert.equal(r.headers.get('content-security-policy'), c.csp);
      assert.equal(r.headers.get('cache-control'), 'no-cache');
      assert.ok(r.headers.get('etag'));
      const urls = links(r.text);
      for (const asset of c.assets) assert.ok(urls.some((u) => u.startsWith(`${asset}?v=`)), `${c.page} loads ${asset}: ${urls.join(' ')}`);
      for (const u of urls) {
        assert.doesNotMatch(u, /^(?:[a-z]+:)?\/\//i, `${c.page}: ${u} is not relative`);
        const asset = await server.get(new URL(u, `${server.url}${c.page}`).pathname + new URL(u, `${server.url}${c.page}`).search);
        assert.equal(asset.status, 200, u);
      }
      assert.doesNotMatch(r.text, /<script>|<style|\sstyle=|\son\w+=/, 'no inline script or style');
    });
  }
  for (const csp of [SWAGGER_CSP, REDOC_CSP]) {
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /connect-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /https?:|\*|unsafe-eval/);
  }
});

test('assets are the npm packages\' files, cached for a year, with ETag, 304 and gzip', async (t) => {
  const server = await startServer(t, await tempDataDir(t));
  const cases: [string, string, string, string][] = [
    ['/api/docs/assets/swagger-ui-bundle.js', 'swagger-ui-dist', 'swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
    ['/api/docs/assets/swagger-ui.css', 'swagger-ui-dist', 'swagger-ui.css', 'text/css; charset=utf-8'],
    ['/api/docs/assets/favicon-32x32.png', 'swagger-ui-dist', 'favicon-32x32.png', 'image/png'],
  ];
  for (const [route, pkg, file, type] of cases) {
    await t.test(route, async () => {
      const res = await fetch(server.url + route, { headers: { 'Accept-Encoding': 'identity' } });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), type);
      assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
      assert.deepEqual(Buffer.from(await res.arrayBuffer()), await packageFile(pkg, file));
      const etag = res.headers.get('etag') as string;
      const cached = await server.get(route, { 'If-None-Match': `W/${etag}` });
      assert.equal(cached.status, 304);
      assert.equal(cached.headers.get('etag'), etag);
    });
  }
  const gz = await fetch(`${server.url}/api/redoc/assets/redoc.standalone.js`, { headers: { 'Accept-Encoding': 'gzip' } });
  assert.equal(gz.headers.get('content-encoding'), 'gzip');
  assert.equal(gz.headers.get('vary'), 'Accept-Encoding');
  const text = await gz.text();
  assert.ok(text.length > 500_000, 'the ReDoc standalone bundle');
  assert.ok(!text.includes('cdn.redoc.ly'), 'the CDN logo is replaced by an inline image');
});

test('only allow-listed files are served: no path tricks, no other package files', async (t) => {
  const server = await startServer(t, await tempDataDir(t));
  const refused = [
    '/api/docs/assets/package.json',
    '/api/docs/assets/index.html',
    '/api/docs/assets/swagger-initializer.js',
    '/api/docs/assets/..%2Fpackage.json',
    '/api/docs/assets/..%2F..%2F..%2Fpackage.json',
    '/api/docs/assets/%2e%2e%2fredoc%2fpackage.json',
    '/api/docs/assets/constructor',
    '/api/docs/assets/__proto__',
    '/api/redoc/assets/redoc.lib.js',
    '/api/redoc/assets/swagger-ui-bundle.js',
    '/api/docs/assets/',
    '/api/docs/assets/swagger-ui.css/x',
  ];
  for (const route of refused) {
    const r = await server.get(route);
    assert.equal(r.status, 404, route);
    assert.deepEqual(r.json, { detail: 'Not Found' }, route);
  }
});
