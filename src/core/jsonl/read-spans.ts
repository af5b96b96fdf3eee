import type { FileHandle } from 'node:fs/promises';

export interface Span {
  offset: number;
  length: number;
}

/** Spans closer than this are read together: one larger read beats two syscalls. */
const MAX_GAP = 16 * 1024;
const MAX_READ = 4 * 1024 * 1024;

/**
 * The text of each span of a file, in the order given; spans near each other
 * are fetched with one read. A span past the end of the file (the file shrank)
 * yields what is there, possibly ''.
 */
export async function readSpans(handle: FileHandle, spans: readonly Span[]): Promise<string[]> {
  const order = spans.map((_, i) => i).sort((a, b) => (spans[a] as Span).offset - (spans[b] as Span).offset);
  const out: string[] = new Array<string>(spans.length).fill('');
  let i = 0;
  while (i < order.length) {
    const first = spans[order[i] as number] as Span;
    let end = first.offset + first.length;
    let j = i + 1;
    while (j < order.length) {
      const next = spans[order[j] as number] as Span;
      const nextEnd = Math.max(end, next.offset + next.length);
      if (next.offset - end > MAX_GAP || nextEnd - first.offset > MAX_READ) break;
      end = nextEnd;
      j++;
    }
    const buf = Buffer.allocUnsafe(end - first.offset);
    const filled = await readFully(handle, buf, buf.length, first.offset);
    for (let k = i; k < j; k++) {
      const span = spans[order[k] as number] as Span;
      const from = Math.min(span.offset - first.offset, filled);
      const to = Math.min(from + span.length, filled);
      out[order[k] as number] = buf.toString('utf8', from, to);
    }
    i = j;
  }
  return out;
}

/**
 * Reads `length` bytes of the file at `position` into the start of `buffer`,
 * as many reads as it takes (one read may return fewer); fewer only at the
 * file's end. Returns how many it read.
 */
export async function readFully(handle: FileHandle, buffer: Buffer, length: number, position: number): Promise<number> {
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled;
}
