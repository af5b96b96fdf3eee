import { open } from 'node:fs/promises';
import { isNotFound } from '../fs-errors.ts';

const NEWLINE = 0x0a;

/**
 * Yields the lines of a file from the last to the first, reading fixed-size
 * chunks backwards from the end, so the cost is proportional to what the
 * caller consumes, not to the size of the file. Lines appended after the
 * call started are not seen. A missing file yields nothing. Empty lines are
 * skipped.
 *
 * @example
 *   for await (const line of readLinesBackward('trends.jsonl')) { ... }
 */
export async function* readLinesBackward(file: string, chunkSize = 64 * 1024): AsyncGenerator<string> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (err) {
    if (isNotFound(err)) return;
    throw err;
  }
  try {
    const { size } = await handle.stat();
    let position = size;
    // Bytes of the line that straddles the chunk boundary (its start is not read yet).
    let pending: Buffer = Buffer.alloc(0);
    while (position > 0) {
      const length = Math.min(chunkSize, position);
      position -= length;
      const chunk = Buffer.allocUnsafe(length);
      const { bytesRead } = await handle.read(chunk, 0, length, position);
      const buf = pending.length ? Buffer.concat([chunk.subarray(0, bytesRead), pending]) : chunk.subarray(0, bytesRead);
      let end = buf.length;
      for (let i = buf.length - 1; i >= 0; i--) {
        if (buf[i] !== NEWLINE) continue;
        if (end > i + 1) yield buf.toString('utf8', i + 1, end);
        end = i;
      }
      pending = Buffer.from(buf.subarray(0, end));
    }
    if (pending.length) yield pending.toString('utf8');
  } finally {
    await handle.close();
  }
}
