import { isNotFound } from '../fs-errors.ts';
import { openDataFile } from '../open-data-file.ts';

const NEWLINE = 0x0a;
const SKIP_CHUNK = 1024 * 1024;

/**
 * Lines longer than this many bytes (without their '\n') are passed over
 * unread by the readers of JSONL logs and counted as skipped: no record
 * estate writes comes near it (a request body is at most 1 MiB).
 */
export const MAX_LINE_BYTES = 1024 * 1024;

/**
 * Yields the lines of a file from the last to the first, reading fixed-size
 * chunks backwards from the end, so the cost is proportional to the bytes
 * the caller consumes (linear, however long a line), not to the size of the
 * file. A line longer than `maxLineBytes` is yielded as `null`: its bytes
 * are scanned for the previous newline, never kept or decoded. Lines
 * appended after the call started are not seen. A missing file yields
 * nothing. Empty lines are skipped.
 *
 * @example
 *   for await (const line of readLinesBackward('trends.jsonl')) { ... }
 */
export async function* readLinesBackward(file: string, chunkSize = 64 * 1024, maxLineBytes = MAX_LINE_BYTES): AsyncGenerator<string | null> {
  let handle;
  try {
    handle = await openDataFile(file);
  } catch (err) {
    if (isNotFound(err)) return;
    throw err;
  }
  try {
    const { size } = await handle.stat();
    let position = size;
    // The line that straddles chunk boundaries, read so far: its pieces, last
    // first, each kept once and joined once when the line's start is found.
    let pieces: Buffer[] = [];
    let pieceBytes = 0;
    // Whether that line is already known to be longer than maxLineBytes (its pieces are then dropped).
    let tooLong = false;
    const finish = (head: Buffer): string | null | undefined => {
      const bytes = head.length + pieceBytes;
      let line: string | null | undefined;
      if (tooLong || bytes > maxLineBytes) line = null;
      else if (bytes === 0) line = undefined;
      else line = pieces.length ? Buffer.concat([head, ...pieces.reverse()], bytes).toString('utf8') : head.toString('utf8');
      pieces = [];
      pieceBytes = 0;
      tooLong = false;
      return line;
    };
    while (position > 0) {
      // Passing over a long line, read larger chunks: fewer reads, the same bytes.
      const length = Math.min(tooLong ? Math.max(chunkSize, SKIP_CHUNK) : chunkSize, position);
      position -= length;
      const chunk = Buffer.allocUnsafe(length);
      const { bytesRead } = await handle.read(chunk, 0, length, position);
      const data = chunk.subarray(0, bytesRead);
      let end = data.length;
      while (end > 0) {
        const nl = data.lastIndexOf(NEWLINE, end - 1);
        if (nl === -1) break;
        const line = finish(data.subarray(nl + 1, end));
        if (line !== undefined) yield line;
        end = nl;
      }
      if (end === 0 || tooLong) continue;
      if (pieceBytes + end > maxLineBytes) {
        tooLong = true;
        pieces = [];
        pieceBytes = 0;
      } else {
        pieces.push(data.subarray(0, end));
        pieceBytes += end;
      }
    }
    const first = finish(Buffer.alloc(0));
    if (first !== undefined) yield first;
  } finally {
    await handle.close();
  }
}
