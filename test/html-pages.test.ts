import assert from 'node:assert/strict';
import { appendFile, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { copyDemoEstate } from '../src/core/demo-estate.ts';
import { escapeHtml, html, safeHref, SafeHtml } from '../src/server/html/html.ts';
import { runEstate } from './helpers/cli.ts';
import { DEMO_FIXTURE, tempDataDir } from './helpers/data-dir.ts';
import { completionBody } from './helpers/records.ts';
import { newKey, startServer, type TestResponse } from './helpers/server.ts';

// /hq/work and /status: self-contained HTML, every value escaped, a strict CSP.

const XSS = '<script>alert(1)</script>';

test('escapeHtml', async (t) => {
  const cases: [unknown, string][] = [
    [XSS, '&lt;script&gt;alert(1)&lt;/script&gt;'],
    [`"quoted" & 'single'`, '&quot;quoted&quot; &amp; &#39;single&#39;'],
    ['&amp;', '&amp;amp;'],
    ['plain text, ünïcödé', 'plain text, ünïcödé'],
    [42, '42'],
    [null, ''],
    [undefined, ''],
  ];
  for (const [input, expected] of cases) {
    await t.test(JSON.stringify(input) ?? 'undefined', () => assert.equal(escapeHtml(input), expected));
  }
});

test('html`` escapes values, keeps nested html, joins lists', () => {
  const items = ['<a>', 'b&c'].map((x) => html`<li>${x}</li>`);
  const out = html`<ul title="${'"><img src=x onerror=alert(1)>'}">${items}${null}${false}${0}</ul>`;
  assert.ok(out instanceof SafeHtml);
  assert.equal(out.toString(), '<ul title="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"><li>&lt;a&gt;</li><li>b&amp;c</li>0</ul>');
});

test('safeHref lets only absolute http(s) URLs through', async (t) => {
  const cases: [unknown, string | undefined][] = [
    ['https://example.org/a?b=1', 'https://example.org/a?b=1'],
    ['http://hub:8080', 'http://hub:8080/'],
    ['javascript:alert(1)', undefined],
    [' JavaScript:alert(1)', undefined],
    ['data:text/html,<b>x</b>', undefined],
    ['/relative', undefined],
    [42, undefined],
  ];
  for (const [input, expected] of cases) await t.test(String(input), () => assert.equal(safeHref(input), expected));
});

/** The page's CSP nonce, checked against every inline script and style; fails on anything loaded from elsewhere. */
function assertSelfContained(r: TestResponse, withScript: boolean): string {
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'text/html; charset=utf-8');
  const csp = r.headers.get('content-security-policy') ?? '';
  const nonce = /script-src 'nonce-([A-Za-z0-9+/=]+)'/.exec(csp)?.[1] ?? /style-src 'nonce-([A-Za-z0-9+/=]+)'/.exec(csp)?.[1];
  assert.ok(nonce, `a nonce in the CSP: ${csp}`);
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/);
  assert.match(csp, withScript ? new RegExp(`script-src 'nonce-${nonce.replace(/[+/=]/g, '\\$&')}'`) : /script-src 'none'/);
  const scripts = [...r.text.matchAll(/<script\b([^>]*)>/g)].map((m) => m[1]);
  assert.equal(scripts.length, withScript ? 1 : 0);
  for (const attrs of scripts) assert.equal(attrs, ` nonce="${nonce}"`);
  for (const m of r.text.matchAll(/<style\b([^>]*)>/g)) assert.equal(m[1], ` nonce="${nonce}"`);
  assert.ok(!/<link\b|<[a-z]+\b[^>]*\ssrc=/i.test(r.text), 'no element loads anything');
  for (const m of r.text.matchAll(/<style\b[^>]*>([^<]*)<\/style>/g)) assert.ok(!/@import|url\(/.test(m[1] ?? ''), 'the style loads nothing');
  return nonce;
}

async function xssServer(t: Parameters<typeof tempDataDir>[0]) {
  const dir = await tempDataDir(t);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const posted = await server.request('POST', '/work/complete', {
    body: completionBody('xss', { title: XSS, assignee: `"><img src=x onerror=alert(2)>`, summary: `</p>${XSS}`, output_url: 'https://example.org/?q="><script>' }),
    headers: { 'X-API-Key': key },
  });
  assert.equal(posted.status, 201);
  // A line no estate writer would produce (the log edited by hand): a javascript: link.
  await appendFile(
    path.join(dir, 'work', 'completions.jsonl'),
    `${JSON.stringify({ id: 'wc_handwritten00000', task_id: 'T-h', board: 'ops', assignee: 'x', title: 'click me', output_url: 'javascript:alert(3)', completed_at: '2026-11-21T00:00:00.000Z' })}\n`,
  );
  return { dir, server };
}

test('/hq/work shows a <script> title as text, never as markup, with a nonce-only CSP', async (t) => {
  const { server } = await xssServer(t);
  const r = await server.get('/hq/work');
  const nonce = assertSelfContained(r, true);
  assert.ok(r.text.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
  assert.ok(!r.text.includes(XSS));
  assert.ok(!r.text.includes('<img'));
  assert.ok(!r.text.includes('javascript:'));
  assert.ok(r.text.includes('href="https://example.org/?q=%22%3E%3Cscript%3E"'));
  assert.ok(r.text.includes('&lt;/p&gt;&lt;script&gt;'));
  assert.equal([...r.text.matchAll(/<li id="c-/g)].length, 2);
  const again = await server.get('/hq/work');
  assert.notEqual(assertSelfContained(again, true), nonce, 'a fresh nonce per response');
});

test('/status shows health, version, pulse and recent activity, the <script> title as text', async (t) => {
  const { server } = await xssServer(t);
  const r = await server.get('/status');
  assertSelfContained(r, false);
  assert.ok(r.text.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
  assert.ok(!r.text.includes(XSS));
  for (const label of ['Health', 'uptime', 'version', 'Latest pulse', 'Recent activity']) assert.ok(r.text.includes(label), label);
  assert.ok(r.text.includes('No health pulse yet.'));
});

test('the pages are public, answer HEAD, and validate their query', async (t) => {
  const server = await startServer(t, await tempDataDir(t));
  const cases: [string, string, number][] = [
    ['GET', '/hq/work', 200],
    ['HEAD', '/hq/work', 200],
    ['GET', '/status', 200],
    ['HEAD', '/status', 200],
    ['GET', '/hq/work?board=ops&limit=5', 200],
    ['GET', '/hq/work?board=NOT%20OK', 422],
    ['GET', '/hq/work?limit=1001', 422],
    ['POST', '/status', 405],
  ];
  for (const [method, route, status] of cases) {
    await t.test(`${method} ${route}`, async () => {
      const r = await server.request(method, route);
      assert.equal(r.status, status);
      if (method === 'HEAD') assert.equal(r.text, '');
    });
  }
  const empty = await server.get('/hq/work');
  assert.ok(empty.text.includes('No completions yet.'));
  assert.ok(empty.text.includes('data-after=""'));
});

test('/status still answers when a source fails, naming the broken section', async (t) => {
  const dir = await tempDataDir(t);
  await rm(path.join(dir, 'health-pulse.jsonl'), { force: true });
  await mkdir(path.join(dir, 'health-pulse.jsonl'));
  const server = await startServer(t, dir);
  const r = await server.get('/status');
  assert.equal(r.status, 200);
  assert.match(r.text, /<p class="error">unavailable: /);
});

test('the demo estate (as npm start serves it) shows a populated /hq/work and /status', async (t) => {
  const root = await tempDataDir(t);
  const dir = path.join(root, 'demo');
  await copyDemoEstate(DEMO_FIXTURE, dir, new Date());
  const server = await startServer(t, dir);
  const work = await server.get('/hq/work');
  assertSelfContained(work, true);
  assert.equal([...work.text.matchAll(/<li id="c-wc_[0-9a-f]{16}">/g)].length, 50);
  const newest = (await server.get('/work/feed?limit=1')).json.items[0];
  assert.ok(work.text.includes(`data-after="${newest.id}"`));
  const status = await server.get('/status');
  assert.match(status.text, /<dd class="(healthy|degraded|unhealthy)">/);
  assert.equal([...status.text.matchAll(/ completed [a-z-]+\//g)].length, 10);
  // And `estate serve --demo` itself is what `npm start` runs.
  const help = await runEstate(['serve', '--help']);
  assert.match(help.stdout, /--demo/);
});
