import { isNotFound } from '../fs-errors.ts';
import { openDataFile } from '../open-data-file.ts';
import { parseRecord, type JsonRecord } from './parse-record.ts';
import { MAX_LINE_BYTES } from './read-lines-backward.ts';

const NEWLINE = 0x0a;
const READ_CHUNK = 256 * 1024;

/**
 * Every record of a JSONL log, oldest first, streamed: memory stays bounded
 * by `maxLineBytes` and the read chunk, time linear in the file's size.
 * Lines that are not JSON objects, and lines longer than `maxLineBytes`
 * (scanned for their end, never kept), are counted in `stats.skipped`.
 * A missing file yields nothing.
 */
export async function* scanRecords(
  file: string,
  stats: { skipped: number } = { skipped: 0 },
  maxLineBytes = MAX_LINE_BYTES,
): AsyncGenerator<JsonRecord> {
  let handle;
  try {
    handle = await openDataFile(file);
  } catch (err) {
    if (isNotFound(err)) return;
    throw err;
  }
  try {
    const buf = Buffer.allocUnsafe(READ_CHUNK);
    // The line not yet ended: copies of its pieces, joined once when it ends.
    let pieces: Buffer[] = [];
    let pieceBytes = 0;
    let tooLong = false;
    const finish = (last: Buffer): string | null => {
      const bytes = pieceBytes + last.length;
      const line = tooLong || bytes > maxLineBytes ? null : pieces.length ? Buffer.concat([...pieces, last], bytes).toString('utf8') : last.toString('utf8');
      pieces = [];
      pieceBytes = 0;
      tooLong = false;
      return line;
    };
    const count = (line: string | null): JsonRecord | undefined => {
      if (line !== null && !line.trim()) return undefined;
      const record = line === null ? undefined : parseRecord(line);
      if (!record) stats.skipped++;
      return record;
    };
    let position = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buf, 0, buf.length, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      const data = buf.subarray(0, bytesRead);
      let start = 0;
      for (let nl = data.indexOf(NEWLINE); nl !== -1; nl = data.indexOf(NEWLINE, start)) {
        const record = count(finish(data.subarray(start, nl)));
        start = nl + 1;
        if (record) yield record;
      }
      if (start === data.length || tooLong) continue;
      if (pieceBytes + data.length - start > maxLineBytes) {
        tooLong = true;
        pieces = [];
        pieceBytes = 0;
      } else {
        pieces.push(Buffer.from(data.subarray(start)));
        pieceBytes += data.length - start;
      }
    }
    const record = count(finish(Buffer.alloc(0)));
    if (record) yield record;
  } finally {
    await handle.close();
  }
}
