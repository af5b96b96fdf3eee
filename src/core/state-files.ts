import type { Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { dataPath } from './data-files.ts';
import { isNotFound } from './fs-errors.ts';
import { openDataFile } from './open-data-file.ts';
import { readFully } from './jsonl/read-spans.ts';

export const STATE_FILES = ['scoreboard', 'heartbeat', 'estate_map'] as const;
export type StateName = (typeof STATE_FILES)[number];

/**
 * State files up to this many bytes are parsed (`readStateDocument`); a
 * larger one is described in `error`, never loaded. `readStateExcerpt` reads
 * files of any size.
 */
export const MAX_PARSED_STATE_BYTES = 4 * 1024 * 1024;

/** Chunk in which the characters of a large state file are counted. */
const COUNT_CHUNK = 256 * 1024;

/**
 * Runs `fn` with one state file open (never through a link) and its stat;
 * undefined when it does not exist. A link, a folder or a FIFO in its place
 * is refused (`openDataFile`). `name` is one of STATE_FILES, never a path.
 */
async function withStateFile<T>(dataDir: string, name: StateName, fn: (handle: FileHandle, info: Stats) => Promise<T>): Promise<T | undefined> {
  if (!(STATE_FILES as readonly string[]).includes(name)) return undefined;
  const file = path.join(dataPath(dataDir, 'state'), `${name}.json`);
  let handle;
  try {
    handle = await openDataFile(file);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
  try {
    return await fn(handle, await handle.stat());
  } finally {
    await handle.close();
  }
}

export interface StateDocument {
  name: StateName;
  exists: boolean;
  modified_at: string | null;
  /** The parsed JSON; null when the file is missing, not valid JSON or larger than MAX_PARSED_STATE_BYTES. */
  data: unknown;
  /** Why `data` is null although the file exists. */
  error: string | null;
}

/** One state file parsed; a missing, corrupt or too large file is described, never thrown. */
export async function readStateDocument(dataDir: string, name: StateName): Promise<StateDocument> {
  const document = await withStateFile(dataDir, name, async (handle, info): Promise<StateDocument> => {
    const modified_at = info.mtime.toISOString();
    const tooLarge = (size: string) => ({
      name,
      exists: true,
      modified_at,
      data: null,
      error: `too large to parse: ${size} bytes, more than the ${MAX_PARSED_STATE_BYTES} estate parses (its text can still be read, cut at max_chars)`,
    });
    if (info.size > MAX_PARSED_STATE_BYTES) return tooLarge(String(info.size));
    // The file may have grown since its stat: never read more than the limit (and one byte to notice).
    // A buffer of its size first (not of the limit: a state file is small, and read at every /summary).
    const first = await readAt(handle, 0, info.size + 1);
    const bytes = first.length <= info.size ? first : Buffer.concat([first, await readAt(handle, first.length, MAX_PARSED_STATE_BYTES + 1 - first.length)]);
    if (bytes.length > MAX_PARSED_STATE_BYTES) return tooLarge(`over ${MAX_PARSED_STATE_BYTES}`);
    try {
      return { name, exists: true, modified_at, data: JSON.parse(bytes.toString('utf8')), error: null };
    } catch (err) {
      return { name, exists: true, modified_at, data: null, error: `not valid JSON: ${(err as Error).message}` };
    }
  });
  return document ?? { name, exists: false, modified_at: null, data: null, error: null };
}

export interface StateExcerpt {
  name: StateName;
  modified_at: string;
  /** Characters (Unicode code points) in the file, as it was when opened (of a file longer than its excerpt: its UTF-8 lead bytes, the same for valid UTF-8). */
  size_chars: number;
  max_chars: number;
  truncated: boolean;
  /** The file's text, cut at `max_chars` characters (never inside a character). */
  content: string;
}

/**
 * One state file's text, cut at `maxChars` characters. Only the bytes those
 * characters can take (4 each at most) are read into memory, whatever the
 * file's size; when the file is longer, its characters are counted in
 * chunks, without decoding (memory bounded, the event loop free between
 * chunks), and the count of an unchanged file (same inode, size and mtime)
 * is remembered.
 */
export async function readStateExcerpt(dataDir: string, name: StateName, maxChars: number): Promise<StateExcerpt | undefined> {
  return withStateFile(dataDir, name, async (handle, info) => {
    // Reads stop at the size of the stat: the answer is of one version of the file, even while it grows.
    const size = info.size;
    const decoder = new StringDecoder('utf8');
    // 4 bytes per character and 3 more: at least maxChars whole characters, or the whole file.
    const head = await readAt(handle, 0, Math.min(size, 4 * maxChars + 3));
    const whole = head.length >= size;
    const text = decoder.write(head) + (whole ? decoder.end() : '');
    const content = cutChars(text, maxChars);
    let sizeChars: number;
    if (whole) sizeChars = countChars(text);
    else {
      const version = `${path.join(dataDir, name)}\0${info.dev}:${info.ino}:${size}:${info.mtimeMs}`;
      sizeChars = counted.get(version) ?? (await countRest(handle, head.length, size, leadBytes(head)));
      remember(version, sizeChars);
    }
    return {
      name,
      modified_at: info.mtime.toISOString(),
      size_chars: sizeChars,
      max_chars: maxChars,
      // Not whole: the head holds maxChars characters and more bytes follow.
      truncated: !whole || sizeChars > maxChars,
      content,
    };
  });
}

/**
 * The excerpt of a state document that is not a file of the data dir (the
 * heartbeat of another store): its JSON, indented, cut at `maxChars`
 * characters; undefined when there is none.
 */
export function documentExcerpt(document: StateDocument, maxChars: number): StateExcerpt | undefined {
  if (!document.exists) return undefined;
  const text = document.error === null ? `${JSON.stringify(document.data, null, 2)}\n` : '';
  const sizeChars = countChars(text);
  const modified = document.modified_at ?? new Date(0).toISOString();
  return { name: document.name, modified_at: modified, size_chars: sizeChars, max_chars: maxChars, truncated: sizeChars > maxChars, content: cutChars(text, maxChars) };
}

/** Character counts of large state files, by file and version; the oldest is forgotten first. */
const counted = new Map<string, number>();
const MAX_COUNTED = 32;

function remember(version: string, chars: number): void {
  counted.delete(version);
  counted.set(version, chars);
  if (counted.size > MAX_COUNTED) counted.delete(counted.keys().next().value as string);
}

/** `before` plus the characters (UTF-8 lead bytes) of bytes [from, to) of the file. */
async function countRest(handle: FileHandle, from: number, to: number, before: number): Promise<number> {
  const buf = Buffer.allocUnsafe(Math.min(COUNT_CHUNK, to - from));
  let chars = before;
  for (let position = from; position < to; ) {
    const { bytesRead } = await handle.read(buf, 0, Math.min(buf.length, to - position), position);
    if (bytesRead === 0) break;
    position += bytesRead;
    chars += leadBytes(buf.subarray(0, bytesRead));
  }
  return chars;
}

/**
 * The bytes of `bytes` that start a UTF-8 character (all but continuation
 * bytes): its code points when it is valid UTF-8. Counting bytes, not
 * decoding them, keeps the count of a large file cheap.
 */
function leadBytes(bytes: Buffer): number {
  let chars = 0;
  for (let i = 0; i < bytes.length; i++) if (((bytes[i] as number) & 0xc0) !== 0x80) chars++;
  return chars;
}

/** Up to `length` bytes of the file from `position` (fewer at its end). */
async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(length);
  return buf.subarray(0, await readFully(handle, buf, length, position));
}

/**
 * Code points in `text`. Decoded UTF-8 holds no lone surrogate: each high
 * surrogate starts a pair, counted once.
 */
function countChars(text: string): number {
  let chars = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff) chars--;
  }
  return chars;
}

/** The first `max` code points of `text`, never half a surrogate pair. */
function cutChars(text: string, max: number): string {
  let i = 0;
  for (let chars = 0; chars < max && i < text.length; chars++) {
    const code = text.charCodeAt(i);
    i += code >= 0xd800 && code <= 0xdbff && i + 1 < text.length ? 2 : 1;
  }
  return text.slice(0, i);
}
