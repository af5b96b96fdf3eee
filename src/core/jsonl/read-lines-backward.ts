import type { FileHandle } from 'node:fs/promises';
import { isNotFound } from '../fs-errors.ts';
import { type FileRead, openForRead } from '../held-data-files.ts';
import { readFully } from './read-spans.ts';

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
  const reader = await BackwardLines.open(file, chunkSize, maxLineBytes);
  if (reader === undefined) return;
  try {
    for (;;) {
      const line = reader.next();
      if (line === MORE) await reader.read();
      else if (line === undefined) return;
      else yield line;
    }
  } finally {
    await reader.close();
  }
}

/** `BackwardLines.next()`: the lines read so far are used up; `read()` the chunk before them. */
export const MORE: unique symbol = Symbol('more');

const EMPTY = Buffer.alloc(0);
const DEFAULT_CHUNK = 64 * 1024;

/**
 * Chunks of readers that are done, for the next readers: a tail read takes
 * one 64 KiB chunk, and allocating one per request, outside V8's heap, had the
 * garbage collector run for them. A chunk is handed back only when its reader
 * closes (its lines are copies by then), and at most POOLED are kept.
 */
const POOLED = 16;
const pool: Buffer[] = [];

function chunkOf(length: number): Buffer {
  const pooled = length === DEFAULT_CHUNK ? pool.pop() : undefined;
  return pooled ?? Buffer.allocUnsafe(length);
}

/** A buffer of at least `length` bytes (up to a chunk's, from the pool); hand it back with `giveChunk` once nothing refers to it. */
export function takeChunk(length: number): Buffer {
  return length <= DEFAULT_CHUNK ? chunkOf(DEFAULT_CHUNK) : Buffer.allocUnsafe(length);
}

export function giveChunk(chunk: Buffer): void {
  if (chunk.length === DEFAULT_CHUNK && pool.length < POOLED) pool.push(chunk);
}

/**
 * The lines of a file from the last to the first, as `readLinesBackward`
 * yields them, for a reader that takes many: `next()` hands out the lines of
 * the chunks read so far one by one without a promise each (an async
 * generator costs one per line), and says MORE when `read()` must fetch the
 * chunk before them. `close()` when done.
 *
 * @example
 *   const lines = await BackwardLines.open('trends.jsonl');
 *   for (let line = lines?.next(); line !== undefined; line = lines.next()) if (line === MORE) await lines.read(); else …
 */
export class BackwardLines {
  readonly #file: FileRead;
  readonly #handle: FileHandle;
  readonly #chunkSize: number;
  readonly #maxLineBytes: number;
  /** Where the bytes not read yet end. */
  #position: number;
  /** The chunk read last, and where its unread part ends. */
  #data: Buffer | undefined;
  #end = 0;
  // The line that straddles chunk boundaries, read so far: its pieces, last
  // first, each kept once and joined once when the line's start is found.
  #pieces: Buffer[] = [];
  #pieceBytes = 0;
  /** Whether that line is already known to be longer than maxLineBytes (its pieces are then dropped). */
  #tooLong = false;
  /** Whether the file's first line has been handed out. */
  #done = false;
  /** The chunks read, handed back to the pool on close. */
  #chunks: Buffer[] = [];
  /** Where in the file the chunk read last starts. */
  #dataOffset = 0;
  /** The bytes of the first read (the end of the file), and where they start. */
  #first: Buffer | undefined;
  #firstOffset = 0;
  /** Where in the file the line returned last starts. */
  #lineStart = -1;
  /** Where the bytes read end at the start: the range read is [#from, file.size). */
  readonly #from: number;
  /** Whether no line has been finished yet: the first one ends where the range does, after a '\n' or not. */
  #atEnd = true;
  /** Whether a '\n' ends the line returned last. */
  #lineEnded = true;
  /** Whether a read came up short (the file shrank under the reader): no line is handed out after it. */
  #cutShort = false;

  private constructor(file: FileRead, chunkSize: number, maxLineBytes: number, from = 0) {
    this.#file = file;
    this.#handle = file.handle;
    this.#position = file.size;
    this.#from = from;
    this.#chunkSize = chunkSize;
    this.#maxLineBytes = maxLineBytes;
  }

  /** Opens `file` of the data dir (see openDataFile and openForRead); undefined when it does not exist. */
  static async open(file: string, chunkSize = DEFAULT_CHUNK, maxLineBytes = MAX_LINE_BYTES): Promise<BackwardLines | undefined> {
    let opened;
    try {
      opened = await openForRead(file);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    return BackwardLines.over(opened, chunkSize, maxLineBytes);
  }

  /** Reads a file opened with openForRead; `close()` ends the read (`done()`). */
  static over(file: FileRead, chunkSize = DEFAULT_CHUNK, maxLineBytes = MAX_LINE_BYTES): BackwardLines {
    return new BackwardLines(file, chunkSize, maxLineBytes);
  }

  /**
   * Reads the bytes [`from`, `to`) of a file its caller holds open (and
   * closes: `close()` leaves the handle open). `from` must be a line's start
   * (0, or just after a '\n'); the first line handed out starts there.
   */
  static range(handle: FileHandle, from: number, to: number, chunkSize = DEFAULT_CHUNK): BackwardLines {
    return new BackwardLines({ handle, size: to, done: async () => {} }, chunkSize, MAX_LINE_BYTES, from);
  }

  /** The size of the file as the read sees it. */
  get size(): number {
    return this.#file.size;
  }

  /** Where in the file the line `next()` returned last starts (-1 before the first). */
  get lineStart(): number {
    return this.#lineStart;
  }

  /** Whether a '\n' ends the line `next()` returned last: false only for a last line without one (torn, or being written). */
  get lineEnded(): boolean {
    return this.#lineEnded;
  }

  /** A copy of the file's bytes from `from` to its end, when the chunks still held cover them (the first chunk read); else undefined. */
  copyFrom(from: number): Buffer | undefined {
    const first = this.#first;
    if (first === undefined || from < this.#firstOffset || this.#firstOffset + first.length !== this.#file.size) return undefined;
    return Buffer.from(first.subarray(from - this.#firstOffset));
  }

  /** The next line back: its text, null when longer than maxLineBytes, MORE when `read()` must come first, undefined past the first line. */
  next(): string | null | typeof MORE | undefined {
    if (this.#cutShort) return undefined;
    for (;;) {
      const data = this.#data;
      if (data !== undefined) {
        while (this.#end > 0) {
          const end = this.#end;
          const nl = data.lastIndexOf(NEWLINE, end - 1);
          if (nl === -1) break;
          this.#end = nl;
          const line = this.#finish(data, nl + 1, end);
          if (line !== undefined) {
            this.#lineStart = this.#dataOffset + nl + 1;
            return line;
          }
        }
        this.#keepHead(data);
        this.#data = undefined;
      }
      if (this.#position > this.#from) return MORE;
      if (this.#done) return undefined;
      this.#done = true;
      const first = this.#finish(EMPTY, 0, 0);
      if (first !== undefined) {
        this.#lineStart = this.#from;
        return first;
      }
    }
  }

  /** Reads the chunk before the bytes read so far. */
  async read(): Promise<void> {
    // Passing over a long line, read larger chunks: fewer reads, the same bytes.
    const length = Math.min(this.#tooLong ? Math.max(this.#chunkSize, SKIP_CHUNK) : this.#chunkSize, this.#position - this.#from);
    this.#position -= length;
    const chunk = chunkOf(length);
    this.#chunks.push(chunk);
    const bytesRead = await readFully(this.#handle, chunk, length, this.#position);
    // Every byte asked for, or a line would be glued to the wrong offset: a short read (the file shrank under us) ends the read.
    if (bytesRead < length) {
      this.#cutShort = true;
      return;
    }
    this.#dataOffset = this.#position;
    this.#data = chunk.subarray(0, bytesRead);
    if (this.#first === undefined) {
      this.#first = this.#data;
      this.#firstOffset = this.#position;
    }
    this.#end = bytesRead;
  }

  async close(): Promise<void> {
    this.#data = undefined;
    this.#first = undefined;
    this.#pieces = [];
    for (const chunk of this.#chunks) giveChunk(chunk);
    this.#chunks = [];
    await this.#file.done();
  }

  /** The line whose last piece is `data[start, end)`; undefined when it is empty. */
  #finish(data: Buffer, start: number, end: number): string | null | undefined {
    const bytes = end - start + this.#pieceBytes;
    let line: string | null | undefined;
    if (this.#tooLong || bytes > this.#maxLineBytes) line = null;
    else if (bytes === 0) line = undefined;
    else if (this.#pieces.length) line = Buffer.concat([data.subarray(start, end), ...this.#pieces.reverse()], bytes).toString('utf8');
    else line = data.toString('utf8', start, end);
    if (this.#pieces.length) this.#pieces = [];
    this.#pieceBytes = 0;
    this.#tooLong = false;
    this.#lineEnded = !this.#atEnd;
    this.#atEnd = false;
    return line;
  }

  /** Keeps the start of a chunk without a newline before it: a piece of the line that began in an earlier chunk. */
  #keepHead(data: Buffer): void {
    const end = this.#end;
    if (end === 0 || this.#tooLong) return;
    if (this.#pieceBytes + end > this.#maxLineBytes) {
      this.#tooLong = true;
      this.#pieces = [];
      this.#pieceBytes = 0;
    } else {
      this.#pieces.push(data.subarray(0, end));
      this.#pieceBytes += end;
    }
  }
}
