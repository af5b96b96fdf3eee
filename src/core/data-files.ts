import path from 'node:path';

/** Every file of the data dir, relative to it (DESIGN.md section 3; docs/data-dir.md). */
export const DATA_FILES = {
  trends: 'trends.jsonl',
  disk: 'disk.jsonl',
  pulse: 'health-pulse.jsonl',
  builds: 'builds.jsonl',
  completions: 'work/completions.jsonl',
  entries: 'publishing/entries.jsonl',
  trainingRuns: 'training/runs',
  state: 'state',
  repos: 'repos.json',
  config: 'estate.config.json',
  keys: 'keys.json',
} as const;

export type DataFile = keyof typeof DATA_FILES;

export function dataPath(dataDir: string, file: DataFile): string {
  return path.join(dataDir, DATA_FILES[file]);
}
