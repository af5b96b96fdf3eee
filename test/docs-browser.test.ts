import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { operationId } from '../src/api/openapi.ts';
import { operations } from '../src/api/operations/index.ts';
import { PAGE_ROUTE_DOCS } from '../src/server/docs-routes.ts';
import { browserSkip, launchChromium } from './helpers/browser.ts';
import { DEMO_FIXTURE, tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';

// /api/docs (Swagger UI) and /api/redoc (ReDoc) in headless Chromium (Debian's
// `chromium` package): every operation renders, the strict CSP holds, and no
// request leaves 127.0.0.1. CI installs Chromium, so there a missing browser
// fails; elsewhere the test is skipped and says why.

const skip = browserSkip;

/** Every route the document describes. */
const ROUTES = [...operations, ...PAGE_ROUTE_DOCS];

/** Bounds every wait, so a broken page fails instead of hanging; never a speed assertion. */
const WAIT = { timeout: 60_000 };

interface Recorder {
  requests: string[];
  problems: string[];
}

async function launch(t: Parameters<typeof tempDataDir>[0]): Promise<{ context: BrowserContext; page: Page; seen: Recorder }> {
  const context = await launchChromium(t, ['--disable-quic']);
  const seen: Recorder = { requests: [], problems: [] };
  context.on('request', (r) => seen.requests.push(r.url()));
  await context.addInitScript({
    content: "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));",
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('console', (m) => {
    if (m.text().startsWith('CSP violation') || /Content Security Policy/.test(m.text())) seen.problems.push(m.text());
  });
  page.on('pageerror', (e) => seen.problems.push(`page error: ${e.message}`));
  return { context, page, seen };
}

/**
 * Waits until `count` elements match `selector`. Polled from here through a
 * locator: the pages' CSP forbids the eval that waitForFunction's polling needs.
 */
async function renders(page: Page, selector: string, count: number): Promise<void> {
  const deadline = Date.now() + WAIT.timeout;
  let seen = 0;
  while ((seen = await page.locator(selector).count()) !== count) {
    if (Date.now() > deadline) assert.fail(`${selector}: ${seen} rendered, not ${count}, after ${WAIT.timeout} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function assertStayedLocal(seen: Recorder, origin: string): void {
  assert.ok(seen.requests.length > 0);
  for (const url of seen.requests) {
    if (url.startsWith('data:') || url.startsWith(`blob:${origin}/`)) continue;
    assert.equal(new URL(url).hostname, '127.0.0.1', `a request left 127.0.0.1: ${url}`);
  }
}

test('Swagger UI at /api/docs renders every operation, calls the API, and loads nothing from elsewhere', { skip }, async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const { page, seen } = await launch(t);

  await page.goto(`${server.url}/api/docs`);
  await renders(page, '.opblock', ROUTES.length);
  const rendered = await page.locator('.opblock').evaluateAll((blocks) => blocks.map((b) => b.id));
  assert.deepEqual(rendered.sort(), ROUTES.map((op) => `operations-${op.tag}-${operationId(op)}`).sort());
  const paths = await page.locator('.opblock-summary-path').evaluateAll((els) => els.map((e) => e.getAttribute('data-path')));
  assert.deepEqual(new Set(paths), new Set(ROUTES.map((op) => op.path)));

  // Authorize with the X-API-Key scheme, then run a protected operation from the page.
  await page.locator('.btn.authorize').first().click();
  const headerScheme = page.locator('.auth-container').filter({ hasText: 'ApiKeyHeader' });
  await headerScheme.locator('input').fill(key);
  await headerScheme.getByRole('button', { name: 'Apply credentials' }).click();
  await page.getByRole('button', { name: 'Close' }).first().click();
  const trends = page.locator(`#operations-trends-${operationId(operations.find((op) => op.id === 'trends.list') as (typeof operations)[number])}`);
  await trends.locator('.opblock-summary-control').click();
  await trends.getByRole('button', { name: 'Try it out' }).click();
  await trends.getByRole('button', { name: 'Execute' }).click();
  const status = trends.locator('.live-responses-table .response .response-col_status');
  await status.waitFor(WAIT);
  assert.equal((await status.innerText()).trim(), '200');

  assert.deepEqual(seen.problems, []);
  assertStayedLocal(seen, server.url);
  assert.ok(seen.requests.some((u) => u.startsWith(`${server.url}/trends`)), 'Try it out called the API');
});

test('ReDoc at /api/redoc renders every operation under its strict CSP and loads nothing from elsewhere', { skip }, async (t) => {
  const server = await startServer(t, await tempDataDir(t));
  const { page, seen } = await launch(t);

  await page.goto(`${server.url}/api/redoc`);
  const sections = page.locator('[data-section-id^="operation/"]');
  await renders(page, '[data-section-id^="operation/"]', ROUTES.length);
  const ids = await sections.evaluateAll((els) => els.map((e) => e.getAttribute('data-section-id')));
  assert.deepEqual(ids.sort(), ROUTES.map((op) => `operation/${operationId(op)}`).sort());
  const titles = await page.locator('[data-section-id^="operation/"] h2').allInnerTexts();
  for (const op of ROUTES) assert.ok(titles.some((title) => title.trim() === op.summary), `ReDoc shows "${op.summary}"`);

  // The search index runs in a blob: worker, which the CSP allows.
  await page.locator('input[placeholder="Search..."]').fill('trend');
  await page.locator('[role="search"] li, [data-role="search:results"] li').first().waitFor(WAIT);

  assert.deepEqual(seen.problems, []);
  assertStayedLocal(seen, server.url);
});
