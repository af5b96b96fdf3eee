import type { FileHandle } from 'node:fs/promises';

const CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

/**
 * Calls `onLine` with each complete line (its bytes, newline included) of
 * `handle` between 0 and `end`, in order, reading one chunk at a time: the
 * file is never held whole, only the line being read. Returns the offset
 * where the complete lines stop: the bytes from there to `end` are a last
 * line with no newline yet (torn, or still being written).
 */
export async function readLinesForward(handle: FileHandle, end: number, onLine: (line: Buffer) => Promise<void> | void): Promise<number> {
  const chunk = Buffer.alloc(CHUNK_BYTES);
  let partial: Buffer[] = [];
  let position = 0;
  let linesEnd = 0;
  while (position < end) {
    const { bytesRead } = await handle.read(chunk, 0, Math.min(CHUNK_BYTES, end - position), position);
    if (bytesRead === 0) break;
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE, 0); nl !== -1 && nl < bytesRead; nl = chunk.indexOf(NEWLINE, start)) {
      const piece = chunk.subarray(start, nl + 1);
      const line = partial.length ? Buffer.concat([...partial, piece]) : Buffer.from(piece);
      partial = [];
      start = nl + 1;
      linesEnd = position + start;
      await onLine(line);
    }
    if (start < bytesRead) partial.push(Buffer.from(chunk.subarray(start, bytesRead)));
    position += bytesRead;
  }
  return linesEnd;
}
