import path from 'node:path';
import { writeFileAtomic } from '../atomic-write.ts';
import { dataPath } from '../data-files.ts';
import { ensureFolder } from '../jsonl/append-record.ts';
import { readDataFile } from '../open-data-file.ts';
import type { SampleCounters } from './sample-types.ts';

/** `collect/counters-<node>.json` in `dataDir`: the kernel counters of `node`'s last sample, for the next one's rates. */
export function countersFile(dataDir: string, node: string): string {
  return path.join(dataPath(dataDir, 'collectState'), `counters-${encodeURIComponent(node)}.json`);
}

/** The counters the last sample of `node` kept, or undefined (none, or not readable as counters: the next sample is a first one). */
export async function readCounters(dataDir: string, node: string): Promise<SampleCounters | undefined> {
  let value: unknown;
  try {
    value = JSON.parse(await readDataFile(countersFile(dataDir, node)));
  } catch {
    return undefined;
  }
  const ok = typeof value === 'object' && value !== null && typeof (value as SampleCounters).ts_ms === 'number' && Number.isFinite((value as SampleCounters).ts_ms);
  return ok ? (value as SampleCounters) : undefined;
}

/** Keeps `counters` as `node`'s last, atomically (temp file + rename). */
export async function writeCounters(dataDir: string, node: string, counters: SampleCounters): Promise<void> {
  const file = countersFile(dataDir, node);
  await ensureFolder(file);
  await writeFileAtomic(file, `${JSON.stringify(counters)}\n`);
}
