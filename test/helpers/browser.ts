import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { chromium, type BrowserContext } from 'playwright-core';

// Debian's headless Chromium for the page tests: a fresh profile per test,
// closed and then removed after it (node:test runs after-hooks in the order
// they were added, so both go in one hook: a profile removed while the
// browser still writes to it fails with ENOTEMPTY).

export const CHROMIUM = '/usr/bin/chromium';
export const chromiumMissing = !existsSync(CHROMIUM);
/** The `skip` of a browser test: skipped without Chromium, except in CI (where .ci/run installs it). */
export const browserSkip = chromiumMissing && !process.env.CI ? `${CHROMIUM} is not installed (apt-get install chromium); CI runs this test` : false;

export async function launchChromium(
  t: Pick<TestContext, 'after'>,
  extraArgs: string[] = [],
  options: { colorScheme?: 'light' | 'dark'; viewport?: { width: number; height: number } } = {},
): Promise<BrowserContext> {
  if (chromiumMissing) throw new Error(`${CHROMIUM} is missing: CI must install Debian's chromium package`);
  const userDataDir = await mkdtemp(path.join(os.tmpdir(), 'estate-chromium-'));
  let context: BrowserContext | undefined;
  t.after(async () => {
    await context?.close();
    await rm(userDataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  });
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', ...extraArgs],
    ...options,
  });
  return context;
}
