import type { FileHandle } from 'node:fs/promises';
import { MAX_LINE_BYTES } from './read-lines-backward.ts';
import { readFully } from './read-spans.ts';

const NEWLINE = 0x0a;
const SKIP_CHUNK = 1024 * 1024;

/** A line of a file, read backwards (see `linesBackward`). */
export interface BackwardLine {
  /** The file offset of its first byte. */
  start: number;
  /** Its text, without the '\n'; null when it is longer than MAX_LINE_BYTES (not read). */
  text: string | null;
  /** Whether a '\n' ends it: false only for the last line of a file that does not end with one (torn, or being written). */
  ended: boolean;
}

/**
 * Yields the lines of the byte range [`from`, `to`) of an open file, from the
 * last to the first, with their offsets. `from` must be a line's start (0, or
 * just after a '\n'). Reads fixed-size chunks backwards, so the cost follows
 * the bytes the caller consumes; a line longer than MAX_LINE_BYTES is scanned
 * for its start, never kept. Empty lines are skipped; whitespace-only ones
 * are the caller's. Stops (yielding nothing more) if the file turns out
 * shorter than `to`.
 */
export async function* linesBackward(handle: FileHandle, from: number, to: number, chunkSize = 64 * 1024): AsyncGenerator<BackwardLine> {
  let position = to;
  // The line that straddles chunk boundaries: its pieces, last first.
  let pieces: Buffer[] = [];
  let pieceBytes = 0;
  let tooLong = false;
  // The first line found is the one that ends at `to`: ended only when it is empty (`to` follows a '\n').
  let first = true;
  const finish = (head: Buffer, start: number): BackwardLine | undefined => {
    const bytes = head.length + pieceBytes;
    let line: BackwardLine | undefined;
    if (bytes > 0) {
      const text = tooLong || bytes > MAX_LINE_BYTES ? null : pieces.length ? Buffer.concat([head, ...pieces.reverse()], bytes).toString('utf8') : head.toString('utf8');
      line = { start, text, ended: !first };
    }
    first = false;
    pieces = [];
    pieceBytes = 0;
    tooLong = false;
    return line;
  };
  while (position > from) {
    const length = Math.min(tooLong ? Math.max(chunkSize, SKIP_CHUNK) : chunkSize, position - from);
    position -= length;
    const chunk = Buffer.allocUnsafe(length);
    if ((await readFully(handle, chunk, length, position)) < length) return;
    let end = length;
    while (end > 0) {
      const nl = chunk.lastIndexOf(NEWLINE, end - 1);
      if (nl === -1) break;
      const line = finish(chunk.subarray(nl + 1, end), position + nl + 1);
      if (line) yield line;
      end = nl;
    }
    if (end === 0 || tooLong) continue;
    if (pieceBytes + end > MAX_LINE_BYTES) {
      tooLong = true;
      pieces = [];
      pieceBytes = 0;
    } else {
      pieces.push(chunk.subarray(0, end));
      pieceBytes += end;
    }
  }
  const line = finish(Buffer.alloc(0), from);
  if (line) yield line;
}
