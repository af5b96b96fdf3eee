// Makes docs/dashboard.png, the README's picture of the dashboard: the
// built `estate serve` over a data dir of two nodes' last day
// (test/helpers/dashboard-estate.ts), in headless Chromium (Debian's).
//
//   npm run build && node scripts/dashboard-screenshot.mjs [--dark] [--out FILE]
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { register } from 'tsx/esm/api';
import { startEstateServe } from '../bench/server-process.mjs';

const root = path.resolve(import.meta.dirname, '..');
const bin = path.join(root, 'bin', 'estate');
const { values } = parseArgs({ options: { dark: { type: 'boolean', default: false }, out: { type: 'string', default: path.join(root, 'docs', 'dashboard.png') } } });
register();
const { writeDashboardEstate } = await import('../test/helpers/dashboard-estate.ts');

const temp = await mkdtemp(path.join(os.tmpdir(), 'estate-shot-'));
const dir = path.join(temp, 'data');
const key = randomBytes(24).toString('hex');
let server;
let browser;
try {
  const init = spawnSync(process.execPath, [bin, 'init', dir], { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`estate init failed (npm run build first?): ${init.stderr}`);
  await writeDashboardEstate(dir, new Date());
  for (const [task, board, who, title] of [
    ['backup-2026-12-06', 'ops', 'cron', 'Nightly backup of the estate data dir'],
    ['EST-412', 'infra', 'tinker', 'Rotate the hub\'s ingest keys'],
    ['EST-415', 'garden', 'gardener', 'Publish the field notes index'],
  ]) {
    const done = spawnSync(process.execPath, [bin, 'work', 'complete', '--task-id', task, '--board', board, '--assignee', who, '--title', title, '--data-dir', dir], { encoding: 'utf8' });
    if (done.status !== 0) throw new Error(`estate work complete failed: ${done.stderr}`);
  }
  server = await startEstateServe(bin, dir, key);
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, colorScheme: values.dark ? 'dark' : 'light', deviceScaleFactor: 1 });
  await page.goto(`${server.url}/dashboard`);
  await page.fill('#key-input', key);
  await page.click('#key-form button[type=submit]');
  await page.waitForFunction(() => ['panel-trends', 'panel-disk', 'panel-pulse'].every((id) => document.getElementById(id)?.dataset.state === 'ok'), null, { timeout: 30_000 });
  await page.locator('#panel-pulse .seg[data-status="degraded"]').focus();
  // The header is sticky: a full-page picture is taken from the top.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: values.out, fullPage: true });
  console.log(`wrote ${path.relative(process.cwd(), values.out)}`);
} finally {
  await browser?.close();
  server?.process.kill('SIGTERM');
  await server?.exited;
  await rm(temp, { recursive: true, force: true });
}
