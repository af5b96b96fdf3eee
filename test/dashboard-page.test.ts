import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import http from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { DASHBOARD_CSP } from '../src/server/dashboard/dashboard-routes.ts';
import { prefersHtml } from '../src/server/prefers-html.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { startServer } from './helpers/server.ts';

// GET /dashboard and its assets over HTTP (the page in a browser is
// dashboard-browser.test.ts), and `/` sending a browser there.

test('GET /dashboard: a page under a strict CSP whose script and stylesheet are this origin\'s, versioned', async (t) => {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ node_name: 'db-1' }));
  const server = await startServer(t, dir);
  const page = await server.get('/dashboard');
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
  assert.equal(page.headers.get('content-security-policy'), DASHBOARD_CSP);
  assert.doesNotMatch(DASHBOARD_CSP, /unsafe-inline|unsafe-eval|https?:/);
  assert.equal(page.headers.get('x-frame-options'), 'DENY');
  assert.match(page.text, /<body data-node="db-1">/);
  assert.doesNotMatch(page.text, /<script>|<style>|style="/, 'nothing inline');
  const script = /<script src="(dashboard\/assets\/dashboard\.js\?v=[\w-]+)"><\/script>/.exec(page.text)?.[1];
  const style = /<link rel="stylesheet" href="(dashboard\/assets\/dashboard\.css\?v=[\w-]+)">/.exec(page.text)?.[1];
  assert.ok(script && style, 'the page names both assets with a version');

  for (const [asset, type] of [[script, /^text\/javascript/], [style, /^text\/css/]] as const) {
    const r = await server.get(`/${asset}`, { 'Accept-Encoding': 'identity' });
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', type);
    assert.equal(r.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    const again = await server.get(`/${asset}`, { 'If-None-Match': r.headers.get('etag') as string });
    assert.equal(again.status, 304);
    // Compressed at build time: brotli where the client takes it, else gzip; both decode to the same bytes.
    for (const [accept, encoding] of [['gzip, deflate, br', 'br'], ['gzip', 'gzip']] as const) {
      const res = await rawGet(`${server.url}/${asset}`, accept);
      assert.equal(res.headers['content-encoding'], encoding, accept);
      assert.ok(res.body.length < r.text.length / 2, `${asset} ${encoding}: ${res.body.length} bytes of ${r.text.length}`);
      assert.equal((encoding === 'br' ? brotliDecompressSync(res.body) : gunzipSync(res.body)).toString('utf8'), r.text);
    }
  }
  assert.match((await server.get(`/${style}`)).text, /\.u-legend/, 'uPlot\'s stylesheet is part of it');
  assert.match((await server.get(`/${script}`)).text, /uplot/i, 'uPlot is bundled into the script');

  for (const bad of ['/dashboard/assets/uplot-LICENSE', '/dashboard/assets/..%2Fpackage.json', '/dashboard/assets/estate.cjs']) {
    const r = await server.get(bad);
    assert.equal(r.status, 404, bad);
    assert.deepEqual(r.json, { detail: 'Not Found' });
  }
  const head = await server.request('HEAD', '/dashboard');
  assert.equal(head.status, 200);
  assert.equal(head.text, '');
  const post = await server.request('POST', '/dashboard');
  assert.equal(post.status, 405);
});

test('GET /: a browser asking for HTML is sent to the dashboard; every other client gets the JSON, which names it', async (t) => {
  const server = await startServer(t, await tempDataDir(t));
  const browser = await fetch(`${server.url}/`, { headers: { Accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' }, redirect: 'manual' });
  assert.equal(browser.status, 302);
  assert.equal(browser.headers.get('location'), 'dashboard');
  assert.match(browser.headers.get('vary') ?? '', /\bAccept\b/);
  assert.equal(new URL(browser.headers.get('location') as string, `${server.url}/`).pathname, '/dashboard');

  for (const accept of [undefined, '*/*', 'application/json', 'application/json, text/html;q=0.5']) {
    const r = await server.get('/', accept ? { Accept: accept } : {});
    assert.equal(r.status, 200, String(accept));
    assert.equal(r.json.dashboard, '/dashboard');
    assert.equal(r.json.docs, '/api/docs');
    assert.match(r.headers.get('vary') ?? '', /\bAccept\b/, 'caches keep the two answers apart');
  }
  const head = await fetch(`${server.url}/`, { method: 'HEAD', headers: { Accept: 'text/html' }, redirect: 'manual' });
  assert.equal(head.status, 302);
});

test('prefersHtml: what a browser sends, and what it does not', () => {
  const cases: [string | undefined, boolean][] = [
    ['text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8', true],
    ['text/html', true],
    ['application/xhtml+xml', true],
    ['TEXT/HTML; q=0.7', true],
    [undefined, false],
    ['', false],
    ['*/*', false],
    ['application/json', false],
    ['text/html;q=0.5, application/json', false],
    ['application/json;q=0.9, text/html', true],
    ['text/html;q=0', false],
    ['text/html;q=abc', false], // a weight that is no number counts for nothing
    ['text/htmlx', false],
  ];
  for (const [accept, expected] of cases) assert.equal(prefersHtml(accept), expected, String(accept));
});

/** A GET whose body is kept as sent (fetch would decode it). */
function rawGet(url: string, acceptEncoding: string): Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: { 'Accept-Encoding': acceptEncoding } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}
