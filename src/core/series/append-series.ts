import { type DataFile, dataPath } from '../data-files.ts';
import { withFileLock } from '../file-lock.ts';
import { appendRecords } from '../jsonl/append-record.ts';
import type { JsonRecord } from '../jsonl/parse-record.ts';
import { logLockFile } from '../retention/prune-file.ts';
import { observeLogAppend, observing } from '../observe.ts';
import type { SeriesSample } from '../store/store.ts';

/**
 * Appends one sample's records to the data dir's series logs: the trend
 * point to `trends.jsonl`, the disk snapshots to `disk.jsonl`, the pulse
 * entry to `health-pulse.jsonl`. Each log takes one durable write (one
 * complete line per record, fdatasync) under its writer lock, the one
 * `estate prune` takes (`<file>.lock`).
 */
export async function appendSeries(dataDir: string, sample: SeriesSample): Promise<void> {
  const parts: [DataFile, readonly object[]][] = [
    ['trends', [sample.trend]],
    ['disk', sample.disks],
    ['pulse', [sample.pulse]],
  ];
  for (const [log, records] of parts) {
    if (records.length > 0) await appendLocked(dataPath(dataDir, log), records as JsonRecord[]);
  }
}

/** Appends `records` to the series log `file` in one durable write under its writer lock (`<file>.lock`), unchecked. */
export async function appendLocked(file: string, records: readonly JsonRecord[]): Promise<void> {
  await withFileLock(logLockFile(file), async (lock) => {
    await lock.check();
    const appending = observing('logAppend');
    await appendRecords(file, records);
    observeLogAppend(appending, file, records.length);
  });
}
