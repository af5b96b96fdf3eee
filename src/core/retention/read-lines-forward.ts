import type { FileHandle } from 'node:fs/promises';
import { MAX_LINE_BYTES } from '../jsonl/read-lines-backward.ts';

const CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

export interface LineSink {
  /** A complete line of at most MAX_LINE_BYTES (newline included). */
  line: (line: Buffer) => Promise<void> | void;
  /** A piece of a longer line, in order; `ended` on its last piece (which holds the newline). Such a line is never assembled. */
  longPiece: (piece: Buffer, ended: boolean) => Promise<void> | void;
}

/**
 * Reads the complete lines of `handle` between 0 and `end`, in order, one
 * chunk at a time: the file is never held whole, only the line being read,
 * and a line longer than MAX_LINE_BYTES (which readers skip) only a chunk at
 * a time. Returns the offset where the complete lines stop: the bytes from
 * there to `end` are a last line with no newline yet (torn, or being written).
 */
export async function readLinesForward(handle: FileHandle, end: number, sink: LineSink): Promise<number> {
  const chunk = Buffer.alloc(CHUNK_BYTES);
  let partial: Buffer[] = [];
  let partialBytes = 0;
  /** Whether the line being read passed MAX_LINE_BYTES: its pieces go to the sink as they come. */
  let long = false;
  let position = 0;
  let linesEnd = 0;
  while (position < end) {
    const { bytesRead } = await handle.read(chunk, 0, Math.min(CHUNK_BYTES, end - position), position);
    if (bytesRead === 0) break;
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE, 0); nl !== -1 && nl < bytesRead; nl = chunk.indexOf(NEWLINE, start)) {
      const piece = chunk.subarray(start, nl + 1);
      start = nl + 1;
      linesEnd = position + start;
      if (long) {
        await sink.longPiece(Buffer.from(piece), true);
        long = false;
        continue;
      }
      const line = partial.length ? Buffer.concat([...partial, piece]) : Buffer.from(piece);
      partial = [];
      partialBytes = 0;
      if (line.length - 1 > MAX_LINE_BYTES) await sink.longPiece(line, true);
      else await sink.line(line);
    }
    if (start < bytesRead) {
      const rest = Buffer.from(chunk.subarray(start, bytesRead));
      if (long) await sink.longPiece(rest, false);
      else {
        partial.push(rest);
        partialBytes += rest.length;
        if (partialBytes > MAX_LINE_BYTES) {
          long = true;
          await sink.longPiece(Buffer.concat(partial, partialBytes), false);
          partial = [];
          partialBytes = 0;
        }
      }
    }
    position += bytesRead;
  }
  return linesEnd;
}
