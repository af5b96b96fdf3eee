import type { Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { LogIndex, type LogIndexOptions, type Positions } from './log-index.ts';
import { parseRecord, type JsonRecord } from './parse-record.ts';
import { MAX_LINE_BYTES } from './read-lines-backward.ts';
import { readSpans } from './read-spans.ts';
import { BLANK, scanFields, WantedFields } from './scan-fields.ts';

/** Bytes read (and indexed without a pause for other work) at once: about 1,000 records. */
const READ_CHUNK = 256 * 1024;
const NEWLINE = 0x0a;

/** One value of a facet: `{ facet: 'board', value: 'ops' }`. */
export interface FacetValue {
  facet: string;
  value: string;
}

/**
 * The records to read, by a facet's value: those of one value (a
 * FacetValue), or those of every value `accepts` takes (an exact facet only):
 * `{ facet: 'content_type', accepts: (type) => type !== 'poem' }`.
 */
export type FacetFilter = FacetValue | { facet: string; accepts: (value: string) => boolean };

/** Whether a record whose facet holds `value` (undefined: none) is one `where` asks for. */
export function facetPasses(where: FacetFilter, value: string | undefined): boolean {
  if (value === undefined) return false;
  return 'value' in where ? value === where.value : where.accepts(value);
}

/** A stat of the file a catch-up reads, taken by its caller right after `IndexedFile.look()` gave it `ticket`. */
export interface Look {
  ticket: number;
  info: Stats;
}

/**
 * How far an index describes a file a reader holds open (`IndexedFile.cover`):
 * `index` knows every record that starts before byte `end` (the end of a
 * line), and only those. The index object only grows after this (a rebuild
 * makes another one), so a reader may keep using it while it reads.
 */
export interface Cover {
  index: LogIndex;
  end: number;
  /**
   * The file is as the last complete catch-up left it (same size and time of
   * change): `end` needs no check, and what follows it is a partial line.
   */
  unchanged: boolean;
}

/**
 * A JSONL file's index and how far it has been read. `catchUp` reads only
 * the bytes appended since the last call; a file that shrank, was replaced
 * (another inode) or no longer ends a line where reading stopped is read
 * again from the start. A partial last line is left until it ends; lines
 * that are not records are counted as skipped. Calls must not overlap: the
 * owner serialises them. Readers need not wait for them: `cover` says what
 * the index knows of the file they hold open, as it is built.
 */
export class IndexedFile {
  readonly #options: LogIndexOptions;
  readonly #wanted: WantedFields | undefined;
  #index: LogIndex;
  /** Bytes consumed: up to the end of the last complete line. */
  #offset = 0;
  #identity: string | undefined;
  #loaded = false;
  /** The file's size when last read. */
  #size = 0;
  /** The file's time of last change when last read. */
  #mtimeMs = 0;
  /** When the partial last line is longer than MAX_LINE_BYTES: how far it has been scanned (no newline before). */
  #longTailEnd = 0;
  /** Handed out in order: to each catch-up just before its stat, and read by readers just after theirs (`ticket`). */
  #tickets = 0;
  /** The ticket of the running (or last) catch-up of this index. */
  #reading: number | undefined;

  constructor(options: LogIndexOptions) {
    this.#options = options;
    this.#wanted = options.fields ? new WantedFields(options.fields) : undefined;
    this.#index = new LogIndex(options);
  }

  get index(): LogIndex {
    return this.#index;
  }

  /** Whether the file has been read once. */
  get loaded(): boolean {
    return this.#loaded;
  }

  /** Taken by a reader right after its stat: `cover` then knows which catch-ups looked at the file after it did. */
  ticket(): number {
    return this.#tickets;
  }

  /**
   * What the index knows, now, of the file `info` describes (stat of a
   * handle a reader holds; `ticket` taken right after it): undefined when
   * the index is of another file (replaced, not yet read) or the file is
   * shorter than what was indexed (cut short since). Unless `unchanged`, the
   * caller checks that `end` still ends a line. While a catch-up runs, `end`
   * moves forward as it reads, and may pass `info.size` when that catch-up
   * took its stat after the reader: the file grew since the reader looked,
   * and the index knows every record before the reader's end too.
   */
  cover(info: Stats, ticket?: number): Cover | undefined {
    if (this.#identity !== identityOf(info)) return undefined;
    if (info.size < this.#offset) {
      const later = ticket !== undefined && this.#reading !== undefined && this.#reading > ticket;
      return later ? { index: this.#index, end: this.#offset, unchanged: false } : undefined;
    }
    return { index: this.#index, end: this.#offset, unchanged: this.#loaded && info.size === this.#size && info.mtimeMs === this.#mtimeMs };
  }

  /**
   * The index, when it knows every complete line of the file `info`
   * describes: the same file, as the last catch-up left it (same size and
   * time of change). With `caughtUpSince` (a catch-up started after `info`
   * was taken, so it checked the file and read it to at least that size):
   * the same file, read at least that far.
   */
  settled(info: Stats, caughtUpSince: boolean): LogIndex | undefined {
    if (!this.#loaded || this.#identity !== identityOf(info)) return undefined;
    const known = caughtUpSince ? info.size <= this.#size : info.size === this.#size && info.mtimeMs === this.#mtimeMs;
    return known ? this.#index : undefined;
  }

  /**
   * Brings the index up to the end of the file's last complete line (open in
   * `handle`; undefined when the file does not exist). Returns the records
   * that appeared, when `collect`: none on the first read, and after a
   * rebuild only those the old index did not know (see isKnown).
   */
  async catchUp(handle: FileHandle | undefined, collect: boolean, seen?: Look): Promise<JsonRecord[]> {
    const appeared: JsonRecord[] = [];
    if (!handle) {
      if (this.#identity !== undefined || this.#offset > 0) this.#reset();
      this.#size = 0;
      this.#loaded = true;
      return appeared;
    }
    const ticket = seen?.ticket ?? ++this.#tickets;
    const info = seen?.info ?? (await handle.stat());
    const identity = identityOf(info);
    // The file as the last catch-up left it (the same file, size and time of change): nothing to read.
    if (this.#loaded && identity === this.#identity && info.size === this.#size && info.mtimeMs === this.#mtimeMs) {
      this.#reading = ticket;
      return appeared;
    }
    let previous: LogIndex | undefined;
    if (identity !== this.#identity || info.size < this.#offset || !(await endsLineAt(handle, this.#offset))) {
      previous = this.#offset > 0 || this.#index.size ? this.#index : undefined;
      this.#reset();
      this.#identity = identity;
    }
    this.#reading = ticket;
    const announce = collect && this.#loaded;
    // One buffer, reused for every chunk: the bytes of a line not yet ended
    // (starting at file offset `lineStart`) move to its front, and it
    // doubles only for a line longer than itself. A line longer than
    // MAX_LINE_BYTES is not kept: it is scanned for its end and counted as
    // skipped. Memory stays bounded, whatever the file and its lines.
    let buf: Buffer | undefined;
    let carried = 0;
    let lineStart = this.#offset;
    // A long partial last line already scanned up to #longTailEnd is not scanned again.
    let skipping = this.#longTailEnd > this.#offset && this.#longTailEnd <= info.size;
    let position = skipping ? this.#longTailEnd : this.#offset;
    while (position < info.size) {
      buf ??= Buffer.allocUnsafe(Math.min(READ_CHUNK, info.size - position));
      if (carried === buf.length) {
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, carried);
        buf = bigger;
      }
      const { bytesRead } = await handle.read(buf, carried, Math.min(buf.length - carried, info.size - position), position);
      if (bytesRead === 0) break;
      // File offset of buf[0].
      const bufStart = position - carried;
      position += bytesRead;
      const data = buf.subarray(0, carried + bytesRead);
      let start = 0;
      for (let nl = data.indexOf(NEWLINE, carried); nl !== -1; nl = data.indexOf(NEWLINE, start)) {
        if (skipping || nl - start > MAX_LINE_BYTES) {
          this.#index.addLine(lineStart, bufStart + nl - lineStart, undefined);
          skipping = false;
        } else this.#addLine(data, start, nl, bufStart, announce, previous, appeared);
        start = nl + 1;
        lineStart = bufStart + start;
      }
      skipping ||= data.length - start > MAX_LINE_BYTES;
      carried = skipping ? 0 : data.copy(buf, 0, start);
      // Readers see the index grow (`cover`): it knows every record before here.
      this.#offset = lineStart;
    }
    this.#offset = lineStart;
    this.#longTailEnd = skipping ? position : 0;
    this.#size = position;
    this.#mtimeMs = info.mtimeMs;
    this.#loaded = true;
    return appeared;
  }

  /**
   * Indexes the lines this process just appended, from the bytes it wrote
   * (`bytes`, complete lines, written at `start`), as `catchUp` would read
   * them back: the same bytes, without reading them. Only when the index had
   * read the file up to `start`, its end then (same file, no partial line):
   * returns false otherwise, and then nothing changed (the caller catches up
   * by reading). `after` is the file's stat after the write: when it shows
   * no more than these bytes, the file counts as read as it is (`cover`'s
   * `unchanged`); otherwise the next catch-up reads what follows.
   */
  appended(start: number, bytes: Buffer, after: Stats, collect: boolean, records?: readonly JsonRecord[]): JsonRecord[] | undefined {
    const end = start + bytes.length;
    if (!this.#loaded || this.#identity !== identityOf(after) || this.#offset !== start || this.#size !== start || this.#longTailEnd !== 0) return undefined;
    if (after.size < end || (bytes.length > 0 && bytes[bytes.length - 1] !== NEWLINE)) return undefined;
    const appeared: JsonRecord[] = [];
    const announce = collect;
    // The records the lines were written from (line i is JSON.stringify(records[i])) stand for their lines where the index would read the same of both.
    const wanted = !announce && this.#options.fields;
    let from = 0;
    let i = 0;
    for (let nl = bytes.indexOf(NEWLINE); nl !== -1; nl = bytes.indexOf(NEWLINE, from), i++) {
      const record = wanted ? records?.[i] : undefined;
      if (nl - from > MAX_LINE_BYTES) this.#index.addLine(start + from, nl - from, undefined);
      else if (record && wanted && readsAsWritten(record, wanted) && !this.#options.whole?.(record)) this.#index.addLine(start + from, nl - from, record);
      else this.#addLine(bytes, from, nl, start, announce, undefined, appeared);
      from = nl + 1;
      this.#offset = start + from;
    }
    this.#offset = end;
    this.#size = end;
    // Another writer's bytes after these (it did not take the lock): the next catch-up reads them.
    this.#mtimeMs = after.size === end ? after.mtimeMs : Number.NaN;
    return appeared;
  }

  /** Indexes the complete line data[start, nl) (at file offset bufStart + start), as a catch-up reads it. */
  #addLine(data: Buffer, start: number, nl: number, bufStart: number, announce: boolean, previous: LogIndex | undefined, appeared: JsonRecord[]): void {
    // Only the fields the index reads, when it says which (and no subscriber wants whole records, nor the key: `whole`).
    const scanned = this.#wanted && !announce ? scanFields(data, start, nl, this.#wanted) : undefined;
    if (scanned === BLANK) return; // A blank line: neither a record nor skipped.
    if (scanned && !this.#options.whole?.(scanned)) {
      this.#index.addLine(bufStart + start, nl - start, scanned);
      return;
    }
    const text = data.toString('utf8', start, nl);
    if (!text.trim()) return;
    const record = this.#index.addLine(bufStart + start, nl - start, parseRecord(text));
    if (record && announce && !(previous && isKnown(previous, record))) appeared.push(record);
  }

  /** A ticket for a catch-up whose stat the caller takes next (`catchUp`'s `seen`). */
  look(): number {
    return ++this.#tickets;
  }

  /** Whether the index has read the file `info` describes to its very end, which ends a line (or is empty). */
  endsLineAt(info: Stats): boolean {
    return this.#loaded && this.#identity === identityOf(info) && this.#offset === info.size && this.#size === info.size;
  }

  #reset(): void {
    this.#index = new LogIndex(this.#options);
    this.#offset = 0;
    this.#longTailEnd = 0;
    this.#size = 0;
    this.#mtimeMs = Number.NaN;
    this.#identity = undefined;
    this.#reading = undefined;
  }
}

/**
 * Whether the `fields` of `record` (those an index reads) are what a read of
 * its line, `JSON.stringify(record)`, gives back: each absent, or a string,
 * a finite number other than -0, a boolean, null, or a plain object or array
 * (no toJSON; the index reads only its type). A field that is undefined
 * (left out of the line), NaN, a Date… is not: the line is read instead.
 */
function readsAsWritten(record: JsonRecord, fields: readonly string[]): boolean {
  if (Object.getPrototypeOf(record) !== Object.prototype || typeof (record as { toJSON?: unknown }).toJSON === 'function') return false;
  for (let f = 0; f < fields.length; f++) {
    const name = fields[f] as string;
    if (!Object.hasOwn(record, name)) continue;
    const value = record[name];
    switch (typeof value) {
      case 'string':
      case 'boolean':
        continue;
      case 'number':
        if (!Number.isFinite(value) || Object.is(value, -0)) return false;
        continue;
      case 'object': {
        if (value === null) continue;
        const proto = Object.getPrototypeOf(value);
        if ((proto !== Object.prototype && proto !== Array.prototype) || typeof (value as { toJSON?: unknown }).toJSON === 'function') return false;
        continue;
      }
      default:
        return false;
    }
  }
  return true;
}

/**
 * After a rebuild, a record the old index knew (its key and id) is not news.
 * The old file cannot be read back to verify, so this trusts the index's
 * hashes (LogIndex.mayHold): a new record taken for a known one (about n /
 * 2^64 per record for an old index of n records with ids) would only go
 * unannounced on the live stream after a log rotation; what is stored and
 * read is decided exactly elsewhere.
 */
function isKnown(previous: LogIndex, record: JsonRecord): boolean {
  return previous.mayHold(record);
}

/** A file's identity: its device and inode. */
export function identityOf(info: Stats): string {
  return `${info.dev}:${info.ino}`;
}

/**
 * The positions of `index`'s last `count` records after position `after` and
 * before position `before` (of the facet values `where` asks for), in file order;
 * for a hashed facet (`LogIndex.isHashed`), of its candidates: see `matching`.
 */
export function lastPositions(index: LogIndex, where: FacetFilter | undefined, count: number, after = -1, before = index.size): number[] {
  if (!where) {
    const from = Math.max(after + 1, before - count, 0);
    return Array.from({ length: Math.max(0, before - from) }, (_, i) => from + i);
  }
  const lists = 'value' in where ? [index.positions(where.facet, where.value)] : index.valuePositions(where.facet, where.accepts);
  const picked: number[] = [];
  for (const list of lists) {
    const lo = firstAbove(list, after);
    const hi = firstAbove(list, before - 1);
    for (let i = Math.max(lo, hi - count); i < hi; i++) picked.push(list.at(i) as number);
  }
  if (lists.length === 1) return picked;
  // The last `count` of each value's list hold the last `count` of them all.
  picked.sort((a, b) => a - b);
  return picked.slice(Math.max(0, picked.length - count));
}

/** The first index of ascending `list` whose value is above `value`. */
function firstAbove(list: Positions, value: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((list.at(mid) as number) <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The positions of `index`'s records whose facet `where.facet` is
 * `where.value`, ascending, each with its record read from `handle`. For a
 * hashed facet (`LogIndex.isHashed`) the index's candidates are checked
 * against their records; for an exact one, the records of every position are read.
 */
export async function matching(handle: FileHandle | undefined, index: LogIndex, where: FacetValue): Promise<{ position: number; record: JsonRecord }[]> {
  const list = index.positions(where.facet, where.value);
  const positions = Array.from({ length: list.length }, (_, i) => list.at(i) as number);
  const records = new Map<number, JsonRecord>();
  await loadRecords(handle, index, positions, records);
  const found: { position: number; record: JsonRecord }[] = [];
  for (const position of positions) {
    const record = records.get(position);
    if (record && index.facetValue(where.facet, record) === where.value) found.push({ position, record });
  }
  return found;
}

/**
 * The records of `index` at `positions`, in that order, read from `handle`;
 * those that no longer parse are left out. `parse` may share them
 * (parseSharedRecord) when the caller keeps them for later reads.
 */
export async function loadRecords(
  handle: FileHandle | undefined,
  index: LogIndex,
  positions: readonly number[],
  into?: Map<number, JsonRecord>,
  parse: (text: string) => JsonRecord | undefined = parseRecord,
): Promise<JsonRecord[]> {
  if (!handle || !positions.length) return [];
  // The spans are taken before the first await: the caller's index, whatever happens meanwhile.
  const texts = await readSpans(handle, positions.map((p) => index.span(p)));
  const records: JsonRecord[] = [];
  texts.forEach((text, i) => {
    const record = parse(text);
    if (!record) return;
    records.push(record);
    into?.set(positions[i] as number, record);
  });
  return records;
}

/** Whether the byte before `offset` is a '\n' (or `offset` is 0): a line starts there. */
export async function endsLineAt(handle: FileHandle, offset: number): Promise<boolean> {
  if (offset === 0) return true;
  const buf = Buffer.alloc(1);
  const { bytesRead } = await handle.read(buf, 0, 1, offset - 1);
  return bytesRead === 1 && buf[0] === NEWLINE;
}
