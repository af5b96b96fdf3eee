import path from 'node:path';

/** Every file of the data dir, relative to it (DESIGN.md section 3; docs/data-dir.md). */
export const DATA_FILES = {
  trends: 'trends.jsonl',
  disk: 'disk.jsonl',
  pulse: 'health-pulse.jsonl',
  builds: 'builds.jsonl',
  completions: 'work/completions.jsonl',
  starts: 'work/starts.jsonl',
  entries: 'publishing/entries.jsonl',
  trainingRuns: 'training/runs',
  trainingUsers: 'training/users',
  trainingIndex: 'training/index.json',
  state: 'state',
  collectState: 'collect',
  repos: 'repos.json',
  config: 'estate.config.json',
  keys: 'keys.json',
  rollups: 'rollups',
  probes: 'providers/probes.jsonl',
  events: 'events/watched.jsonl',
} as const;

export type DataFile = keyof typeof DATA_FILES;

/** The data dirs this process has named paths in (see `dataDirOf`). */
const knownDataDirs = new Set<string>();

export function dataPath(dataDir: string, file: DataFile): string {
  knownDataDirs.add(path.resolve(dataDir));
  return path.join(dataDir, DATA_FILES[file]);
}

/**
 * The data dir that `file` lies in (at most three levels down, as every path
 * of the layout does), if `dataPath` has named a path in it; the nearest one
 * when data dirs are nested.
 */
export function dataDirOf(file: string): string | undefined {
  let dir = path.resolve(file);
  for (let depth = 0; depth < 3; depth++) {
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
    if (knownDataDirs.has(dir)) return dir;
  }
  return undefined;
}
