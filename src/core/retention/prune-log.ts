import { dataPath } from '../data-files.ts';
import { type PruneCounts, type PruneOptions, pruneFile } from './prune-file.ts';

/** The logs retention prunes: the series other tools and the collector append to (DESIGN.md section 7a). */
export const PRUNABLE_LOGS = ['trends', 'disk', 'pulse', 'builds'] as const;
export type PrunableLog = (typeof PRUNABLE_LOGS)[number];

export function isPrunableLog(name: string): name is PrunableLog {
  return (PRUNABLE_LOGS as readonly string[]).includes(name);
}

/**
 * Drops the records of `log` in `dataDir` dated before `cutoff`, under the
 * log's writer lock (see pruneFile for the contract).
 *
 * @example await pruneLog(dataDir, 'trends', new Date(Date.now() - parseDuration('30d', '--older-than')))
 */
export function pruneLog(dataDir: string, log: PrunableLog, cutoff: Date, options: PruneOptions = {}): Promise<PruneCounts> {
  return pruneFile(dataPath(dataDir, log), cutoff, options);
}
