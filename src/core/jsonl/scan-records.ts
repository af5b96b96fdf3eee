import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { isNotFound } from '../fs-errors.ts';
import { parseRecord, type JsonRecord } from './parse-record.ts';

/**
 * Every record of a JSONL log, oldest first, streamed (constant memory).
 * Lines that are not JSON objects are counted in `stats.skipped`.
 * A missing file yields nothing.
 */
export async function* scanRecords(file: string, stats: { skipped: number } = { skipped: 0 }): AsyncGenerator<JsonRecord> {
  const stream = createReadStream(file, { encoding: 'utf8', highWaterMark: 256 * 1024 });
  const opened = new Promise<boolean>((resolve, reject) => {
    stream.once('ready', () => resolve(true));
    stream.once('error', (err) => (isNotFound(err) ? resolve(false) : reject(err)));
  });
  if (!(await opened)) return;
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  try {
    for await (const line of lines) {
      if (!line.trim()) continue;
      const record = parseRecord(line);
      if (record) yield record;
      else stats.skipped++;
    }
  } finally {
    lines.close();
    stream.destroy();
  }
}
