import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { browserSkip, launchChromium } from './helpers/browser.ts';
import { runEstate } from './helpers/cli.ts';
import { writeDashboardEstate } from './helpers/dashboard-estate.ts';
import { ROOT, tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer, type TestServer } from './helpers/server.ts';
import { waitUntil } from './helpers/wait-until.ts';

// The dashboard in headless Chromium (Debian's), on a data dir with every
// panel's data: no console error, no CSP violation, no request leaving
// 127.0.0.1; protected panels ask for a key and show data with one; a
// completion the CLI records appears live; the view lives in the URL.
// Screenshots in light and dark go to test-artifacts/ (ESTATE_TEST_ARTIFACTS),
// looked at, not compared. Skipped without Chromium, except in CI.

const skip = browserSkip;
/** Bounds every wait, so a broken page fails instead of hanging; never a speed assertion. */
const WAIT = { timeout: 30_000 };
const XSS = '<img src=x onerror=alert(1)><script>alert(2)</script>';
const ARTIFACTS = process.env.ESTATE_TEST_ARTIFACTS ?? path.join(ROOT, 'test-artifacts');
// The page's globals, for the functions run in it (the tests' lib has no DOM; a string would be eval, which the page's CSP refuses).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const document: any, location: any, sessionStorage: any, getComputedStyle: any;

const PROTECTED = ['panel-nodes', 'panel-trends', 'panel-disk', 'panel-pulse', 'panel-builds', 'panel-events', 'panel-schedules', 'panel-providers'];

interface Watched {
  page: Page;
  problems: string[];
  requests: string[];
  statuses: { url: string; status: number }[];
}

async function open(t: TestContext, server: TestServer, options: { colorScheme?: 'light' | 'dark'; viewport?: { width: number; height: number } } = {}): Promise<Watched> {
  const context: BrowserContext = await launchChromium(t, [], { viewport: { width: 1400, height: 1000 }, ...options });
  const problems: string[] = [];
  const requests: string[] = [];
  const statuses: { url: string; status: number }[] = [];
  await context.addInitScript({ content: "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective));" });
  context.on('request', (r) => requests.push(r.url()));
  context.on('response', (r) => statuses.push({ url: r.url(), status: r.status() }));
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('dialog', (d) => {
    problems.push(`a dialog opened: ${d.message()}`);
    void d.dismiss();
  });
  return { page, problems, requests, statuses };
}

const ready = (page: Page) => page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, WAIT);
const state = (page: Page, id: string) => page.locator(`#${id}`).getAttribute('data-state');
const settled = (page: Page) =>
  page.waitForFunction((ids: string[]) => ids.every((id) => (document.getElementById(id)?.dataset.state ?? 'loading') !== 'loading'), PROTECTED, WAIT);

async function useKey(page: Page, key: string): Promise<void> {
  await page.fill('#key-input', key);
  await page.click('#key-form button[type=submit]');
  await page.waitForFunction(() => document.getElementById('panel-trends')?.dataset.state === 'ok', null, WAIT);
  await settled(page);
}

async function estate(t: TestContext): Promise<{ dir: string; key: string; server: TestServer }> {
  const dir = await tempDataDir(t);
  await writeDashboardEstate(dir, new Date());
  const key = await newKey(dir);
  return { dir, key, server: await startServer(t, dir) };
}

test('the dashboard shows every panel, protected ones once a key is typed, and a completion the CLI records, live', { skip }, async (t) => {
  const { dir, key, server } = await estate(t);
  const { page, problems, requests } = await open(t, server);
  await page.goto(`${server.url}/dashboard`);
  await ready(page);

  // Without a key: the public parts, and a prompt where the rest would be; no protected route is even asked.
  for (const id of PROTECTED) {
    assert.equal(await state(page, id), 'needs-key', id);
    assert.match(await page.locator(`#${id}`).innerText(), /enter an API key/);
  }
  assert.equal(await state(page, 'panel-status'), 'ok');
  assert.equal(await state(page, 'panel-work'), 'ok', 'the work feed is public');
  const protectedPaths = /\/(nodes|trends|disk|health\/pulse|builds|events|schedules|providers)\b/;
  assert.deepEqual(requests.filter((u) => protectedPaths.test(new URL(u).pathname)), []);

  await useKey(page, key);
  for (const id of PROTECTED) assert.ok(['ok', 'empty'].includes((await state(page, id)) as string), `${id}: ${await state(page, id)}`);
  assert.equal(await page.evaluate(() => sessionStorage.getItem('estate.api_key')), key, 'kept in this tab only');
  assert.equal(await page.locator('#key-form').isHidden(), true);

  // Nodes: every node, the silent one marked stale; the highest disk past 95 % in the bad colour.
  assert.deepEqual(await page.locator('#panel-nodes tbody th').allInnerTexts(), ['db-1', 'edge-9', 'web-1']);
  assert.equal(await page.locator('#panel-nodes tr.stale th').innerText(), 'edge-9');
  assert.equal(await page.locator('#panel-nodes tbody tr:first-child td.level-bad').count(), 1);
  // Trends: the collector's groups, a line per node, each chart drawn on a canvas.
  for (const chart of ['cpu:cpu_pct', 'memory:mem_used_pct', 'load:load1', 'network:net_rx_bytes_s', 'diskio:disk_read_bytes_s']) {
    assert.equal(await page.locator(`#panel-trends figure[data-chart="${chart}"] canvas`).count(), 1, chart);
  }
  assert.deepEqual(await page.locator('#panel-trends figure[data-chart="cpu:cpu_pct"] .u-legend .u-series:not(:first-child) .u-label').allInnerTexts(), ['db-1', 'web-1']);
  // Disk: each mount's latest share, db-1's root past the bad threshold.
  assert.match(await page.locator('#panel-disk .mounts li.level-bad').innerText(), /db-1:\//);
  assert.equal(await page.locator('#panel-disk figure canvas').count(), 1);
  // Pulse: a row per node; the degraded stretch names its failing check.
  assert.deepEqual(await page.locator('#panel-pulse .pulse-row > .mono').allInnerTexts(), ['db-1', 'web-1']);
  const degraded = page.locator('#panel-pulse .seg[data-status="degraded"]');
  assert.equal(await degraded.count(), 1);
  assert.match((await degraded.getAttribute('title')) as string, /disk:\/ 96 \(degraded\)/);
  await degraded.focus();
  assert.match(await page.locator('.pulse-caption').innerText(), /db-1: degraded .* disk:\/ 96/);
  // Builds: per project, and the window's failure with its commit.
  assert.deepEqual(await page.locator('#panel-builds .bars li > .mono').allInnerTexts(), ['estate', 'site']);
  assert.match(await page.locator('#panel-builds .list li').innerText(), /estate[\s\S]*main[\s\S]*9f3c2a1/);
  // Events: the stale node, and the report's schedule gone down.
  assert.match(await page.locator('#panel-events').innerText(), /node_stale[\s\S]*edge-9/);
  assert.match(await page.locator('#panel-events').innerText(), /schedule_down[\s\S]*hourly-report is down/);
  // Schedules: each with its state and last check-in.
  assert.deepEqual(await page.locator('#panel-schedules li .badge').allInnerTexts(), ['up', 'down']);
  assert.match(await page.locator('#panel-schedules li[data-schedule="nightly-backup"]').innerText(), /nightly-backup[\s\S]*last 2h/);

  // Live: a completion recorded through the CLI appears at the top, its title as text.
  await page.waitForSelector('#panel-work .live.on', WAIT);
  const cli = await runEstate(['work', 'complete', '--task-id', 'T-dash', '--board', 'ops', '--assignee', 'cron', '--title', XSS, '--json', '--data-dir', dir]);
  assert.equal(cli.code, 0, cli.stderr);
  await page.waitForSelector(`#w-${cli.json.id}`, WAIT);
  assert.equal(await page.locator(`#w-${cli.json.id} .title`).innerText(), XSS);
  assert.equal(await page.locator('#app img, #app script').count(), 0, 'data never becomes markup');

  await mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard-light.png'), fullPage: true });

  assert.deepEqual(problems, []);
  for (const url of requests) {
    assert.equal(new URL(url).hostname, '127.0.0.1', `a request left 127.0.0.1: ${url}`);
    assert.doesNotMatch(url, /api_key|est_/, 'the key never goes in a URL');
  }
});

test('the dashboard in dark mode, on a phone\'s width, shows the same panels', { skip }, async (t) => {
  const { key, server } = await estate(t);
  const { page, problems } = await open(t, server, { colorScheme: 'dark', viewport: { width: 390, height: 844 } });
  await page.goto(`${server.url}/dashboard`);
  await ready(page);
  await useKey(page, key);
  const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(background, 'rgb(17, 20, 23)', 'the dark palette');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 1, `the page fits the phone's width (${overflow}px wider)`);
  await mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard-dark-phone.png'), fullPage: true });
  assert.deepEqual(problems, []);
});

test('the view lives in the URL: a node, a window, a drag to zoom, another field; a reload opens the same view; unchanged data costs a 304', { skip }, async (t) => {
  const { key, server } = await estate(t);
  const { page, problems, statuses } = await open(t, server);
  await page.goto(`${server.url}/dashboard`);
  await ready(page);
  await useKey(page, key);

  await page.click('#panel-nodes a[data-node="web-1"]');
  await page.waitForFunction(() => new URL(location.href).searchParams.get('node') === 'web-1', null, WAIT);
  await page.waitForSelector('#panel-trends figure[data-chart="load"]', WAIT);
  assert.deepEqual(await page.locator('#panel-trends figure[data-chart="load"] .u-legend .u-series:not(:first-child) .u-label').allInnerTexts(), ['load1', 'load5', 'load15']);
  assert.equal(await page.locator('#panel-nodes tr.selected th').innerText(), 'web-1');

  await page.click('button[data-preset="7d"]');
  await page.waitForFunction(() => new URL(location.href).searchParams.get('range') === '7d', null, WAIT);
  assert.equal(await page.locator('button[data-preset="7d"]').getAttribute('aria-pressed'), 'true');

  await page.selectOption('#panel-trends select', 'gpu_temp_c');
  await page.waitForSelector('#panel-trends figure[data-chart="extra:gpu_temp_c"] canvas', WAIT);
  assert.equal(new URL(page.url()).searchParams.get('fields'), 'gpu_temp_c');

  await page.reload();
  await ready(page);
  await page.waitForSelector('#panel-trends figure[data-chart="extra:gpu_temp_c"] canvas', WAIT);
  assert.equal(await page.locator('#node-select').inputValue(), 'web-1');
  assert.equal(await page.locator('button[data-preset="7d"]').getAttribute('aria-pressed'), 'true');

  // A drag across a chart asks for that window: a fixed from and to, in the URL.
  const over = page.locator('#panel-trends figure[data-chart="cpu"] .u-over');
  const box = await over.boundingBox();
  assert.ok(box);
  await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.9, box.y + box.height / 2, { steps: 5 });
  await page.mouse.up();
  await page.waitForFunction(() => new URL(location.href).searchParams.has('from'), null, WAIT);
  const url = new URL(page.url());
  const from = Date.parse(url.searchParams.get('from') as string);
  const to = Date.parse(url.searchParams.get('to') as string);
  assert.ok(from < to && to - from < 4 * 86_400_000, `a part of the 7 days: ${url.search}`);
  assert.equal(url.searchParams.get('range'), null);
  await page.waitForFunction(() => document.querySelectorAll('button.preset[aria-pressed="true"]').length === 0, null, WAIT);

  // The same fixed window again: the answers are unchanged, so the server answers 304.
  await settled(page);
  const before = statuses.length;
  await page.click('#refresh');
  await page.waitForFunction(() => /[1-9]\d* of \d+ answers unchanged/.test(document.querySelector('footer')?.textContent ?? ''), null, WAIT);
  const ranges = () => statuses.slice(before).filter((s) => new URL(s.url).pathname === '/trends/range');
  // (A read the drag started may still answer 200 after the click; the refresh's own reads are 304s.)
  const last = () => new Map(ranges().map((r) => [r.url, r.status]));
  // The browser's response events reach this process after the page has shown the answers: wait for them.
  await waitUntil('the refresh\'s /trends/range answers reported', () => last().size > 0 && [...last().values()].every((status) => status === 304)).catch(() => {});
  assert.ok(last().size > 0 && [...last().values()].every((status) => status === 304), JSON.stringify(ranges()));
  assert.deepEqual(problems, []);
});
