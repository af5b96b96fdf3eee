import { mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { DATA_FILES } from './data-files.ts';

/**
 * Creates a valid empty data dir (and the folders estate writes into).
 * Existing files are never touched. Returns the folders it created.
 */
export async function initDataDir(dir: string): Promise<string[]> {
  const folders = [dir, ...['state', 'work', 'publishing', DATA_FILES.trainingRuns].map((f) => path.join(dir, f))];
  const created: string[] = [];
  for (const folder of folders) {
    const made = await mkdir(folder, { recursive: true, mode: 0o700 });
    if (made !== undefined) created.push(folder);
  }
  await readdir(dir);
  return created;
}
