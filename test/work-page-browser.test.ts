import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { browserSkip, launchChromium } from './helpers/browser.ts';
import { DEMO_FIXTURE, tempDataDir } from './helpers/data-dir.ts';
import { startServer } from './helpers/server.ts';

// /hq/work and /status in headless Chromium: the inline script runs under the
// nonce CSP (no violation), the page goes live and shows a completion the CLI
// records, and a <script> title stays text. Skipped without Chromium, except in CI.

const skip = browserSkip;
/** Bounds every wait, so a broken page fails instead of hanging; never a speed assertion. */
const WAIT = { timeout: 30_000 };
const XSS = '<script>alert(1)</script><img src=x onerror=alert(2)>';

test('/hq/work goes live in a browser and shows a completion the CLI records, as text', { skip }, async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const server = await startServer(t, dir);
  const context = await launchChromium(t);
  const problems: string[] = [];
  const requests: string[] = [];
  context.on('request', (r) => requests.push(r.url()));
  await context.addInitScript({
    content: "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective));",
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('console', (m) => {
    if (/CSP violation|Content Security Policy/.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('dialog', (d) => {
    problems.push(`a dialog opened: ${d.message()}`);
    void d.dismiss();
  });

  await page.goto(`${server.url}/hq/work`);
  await page.waitForSelector('#live.on', WAIT);
  const before = await page.locator('#feed > li').count();
  assert.equal(before, 50);

  const cli = await runEstate(['work', 'complete', '--task-id', 'T-live', '--board', 'ops', '--assignee', 'cron', '--title', XSS, '--json', '--data-dir', dir]);
  assert.equal(cli.code, 0, cli.stderr);
  await page.waitForSelector(`#c-${cli.json.id}`, WAIT);
  assert.equal(await page.locator('#feed > li').first().getAttribute('id'), `c-${cli.json.id}`);
  assert.equal(await page.locator(`#c-${cli.json.id} .title`).innerText(), XSS);
  assert.equal(await page.locator('#feed img').count(), 0);
  assert.equal(await page.locator('#feed > li').count(), 50, 'the list keeps its length');

  await page.goto(`${server.url}/status`);
  await page.locator('text=Recent activity').waitFor(WAIT);
  assert.ok((await page.locator('main').innerText()).includes(`cron completed ops/T-live: ${XSS}`));

  assert.deepEqual(problems, []);
  for (const url of requests) assert.equal(new URL(url).hostname, '127.0.0.1', `a request left 127.0.0.1: ${url}`);
});
