import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { copyDemoEstate } from '../../src/core/demo-estate.ts';
import { initDataDir } from '../../src/core/init-data-dir.ts';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const DEMO_FIXTURE = path.join(ROOT, 'fixtures', 'demo-estate');

/** A fresh data dir in a temp folder, removed after the test: empty, or a copy of a fixture. */
export async function tempDataDir(t: Pick<TestContext, 'after'>, fixture?: string): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'estate-test-'));
  // Retries: a server closed after this hook may still be finishing a write in the dir.
  t.after(() => rm(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));
  const dir = path.join(root, 'data');
  if (fixture) await cp(fixture, dir, { recursive: true });
  else await initDataDir(dir);
  return dir;
}

/**
 * A copy of the demo estate with its times moved to the present, as
 * `estate serve --demo` makes it: for tests of windows that end now (the
 * builds of the last 7 days), which a copy as checked in leaves behind as
 * the calendar moves on.
 */
export async function liveDemoDataDir(t: Pick<TestContext, 'after'>): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'estate-test-'));
  t.after(() => rm(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));
  const dir = path.join(root, 'data');
  await copyDemoEstate(DEMO_FIXTURE, dir, new Date());
  return dir;
}
