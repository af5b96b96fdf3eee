import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';

// For the tests of a collector sending to a hub (estate collect --url).

/** A node's data dir that does not exist yet (the collector makes it), or, with `config`, one holding only that config. */
export async function nodeDir(t: Pick<TestContext, 'after'>, config?: object): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'estate-collect-send-'));
  t.after(() => rm(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));
  const dir = path.join(root, 'node');
  if (config) {
    await mkdir(dir);
    await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify(config));
  }
  return dir;
}

/** The ts of each sample a collector printed with --json (one line each without --once). */
export function printedTs(stdout: string): string[] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l).trend.ts);
}
