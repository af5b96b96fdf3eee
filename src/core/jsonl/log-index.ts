import { checkHash, hashString } from './hash-string.ts';
import type { JsonRecord } from './parse-record.ts';

type ValueOf = (record: JsonRecord) => string | undefined;

export interface LogIndexOptions {
  /** Whether a parsed JSON object is a record of this log; other lines are counted as skipped. */
  accept: (record: JsonRecord) => boolean;
  /** The record's unique key (the idempotency key); the first record with a key owns it. */
  key: (record: JsonRecord) => string | undefined;
  /** Secondary lookups by name, exact, for values many records share: `board` → the record's board. */
  facets?: Readonly<Record<string, ValueOf>>;
  /**
   * Secondary lookups for values (about) unique to a record, such as its id:
   * indexed by hash, so they answer candidates that the caller checks
   * against the records read back (see `LogIndex.isHashed`).
   */
  uniqueFacets?: Readonly<Record<string, ValueOf>>;
  /** The 32-bit hash of keys and unique facet values (default `hashString`); tests inject colliding ones. */
  hash?: (value: string) => number;
  /** The key's second, independent 32-bit hash (default `checkHash`); see `LogIndex.mayHaveKey`. */
  checkHash?: (value: string) => number;
  /** Counts kept as records are indexed, for exact aggregates at any size (see `LogIndex.tally`). */
  tally?: TallyOptions;
}

export interface TallyOptions {
  /** The record's time in ms since the epoch (NaN when it has none). */
  time: (record: JsonRecord) => number;
  /** Groups records by this value (an agent's name); records without one are counted in the totals only. */
  by?: ValueOf;
  /** Per group, the distinct values of this (the boards an agent worked on). */
  distinct?: ValueOf;
}

/** Exact counts over every indexed record; see `LogIndex.tally`. */
export interface IndexTally {
  count: number;
  /** Per cutoff: the records whose time is at or after it. */
  since: number[];
  /** The earliest record time (ms), or undefined. */
  earliest: number | undefined;
  /** Lines of the log that are not records. */
  skipped: number;
  groups: { value: string; count: number; since: number[]; newest: number; distinct: string[] }[];
}

/**
 * Where each record of a JSONL log sits in the file, and its lookups (by key,
 * by facet value), without the records themselves: a record is read back from
 * its byte range when asked for. Positions count records in file order.
 *
 * Memory: per record, only numbers in typed arrays (offset, length, the
 * hashes of its key and unique facet values, its slots in hash tables and in
 * the position list of each facet value). Keys and unique facet values are
 * kept as hashes, not strings: their lookups return candidate positions, a
 * superset of the true answer (usually exactly it), which the caller verifies
 * against the records it reads back. Facets (few distinct values) stay exact.
 */
export class LogIndex {
  readonly #options: LogIndexOptions;
  readonly #hash: (value: string) => number;
  /** Byte offset of each record's line, by position. */
  readonly #offsets = new NumberList(Float64Array);
  /** Byte length of each record's line, without its '\n'. */
  readonly #lengths = new NumberList(Uint32Array);
  /** Byte offsets of the lines that are not records, ascending. */
  readonly #skipped = new NumberList(Float64Array);
  readonly #byKey = new HashTable();
  /** The key's second hash, by position (0 for a record without a key). */
  readonly #keyChecks = new NumberList(Uint32Array);
  readonly #checkHash: (value: string) => number;
  readonly #facets = new Map<string, Map<string, NumberList<Int32Array>>>();
  readonly #unique = new Map<string, HashTable>();
  readonly #facetOf: [string, ValueOf][];
  readonly #uniqueOf: [string, ValueOf][];
  /** Every record's time, kept sorted (appends come nearly in order: an insert moves few numbers). */
  readonly #times = new SortedTimes();
  readonly #groups = new Map<string, { times: SortedTimes; newest: number; distinct: Set<string> }>();

  constructor(options: LogIndexOptions) {
    this.#options = options;
    this.#hash = options.hash ?? hashString;
    this.#checkHash = options.checkHash ?? checkHash;
    this.#facetOf = Object.entries(options.facets ?? {});
    this.#uniqueOf = Object.entries(options.uniqueFacets ?? {});
    for (const [name] of this.#facetOf) this.#facets.set(name, new Map());
    for (const [name] of this.#uniqueOf) {
      if (this.#facets.has(name)) throw new Error(`log index: facet ${name} is both exact and unique`);
      this.#unique.set(name, new HashTable());
    }
  }

  /** Indexes one non-blank line; returns the record when it is one of this log's. */
  addLine(offset: number, length: number, record: JsonRecord | undefined): JsonRecord | undefined {
    if (!record || !this.#options.accept(record)) {
      this.#skipped.push(offset);
      return undefined;
    }
    const position = this.#offsets.length;
    this.#offsets.push(offset);
    this.#lengths.push(length);
    const key = this.#options.key(record);
    if (key === undefined) this.#keyChecks.push(0);
    else {
      this.#keyChecks.push(this.#checkHash(key));
      this.#byKey.add(position, this.#hash(key));
    }
    for (const [name, valueOf] of this.#facetOf) {
      const value = valueOf(record);
      if (value === undefined) continue;
      const byValue = this.#facets.get(name) as Map<string, NumberList<Int32Array>>;
      let list = byValue.get(value);
      if (!list) byValue.set(value, (list = new NumberList(Int32Array)));
      list.push(position);
    }
    for (const [name, valueOf] of this.#uniqueOf) {
      const value = valueOf(record);
      if (typeof value === 'string') (this.#unique.get(name) as HashTable).add(position, this.#hash(value));
    }
    const tally = this.#options.tally;
    if (tally) {
      const time = tally.time(record);
      this.#times.insert(time);
      const value = tally.by?.(record);
      if (typeof value === 'string') {
        let group = this.#groups.get(value);
        if (!group) this.#groups.set(value, (group = { times: new SortedTimes(), newest: position, distinct: new Set() }));
        group.times.insert(time);
        group.newest = position;
        const other = tally.distinct?.(record);
        if (typeof other === 'string') group.distinct.add(other);
      }
    }
    return record;
  }

  /**
   * Exact counts over every record indexed so far (options.tally): in all,
   * and at or after each cutoff (ms); per group, the same, the position of
   * its newest record and its distinct values, sorted. Costs O(groups ×
   * cutoffs × log n), whatever the log's size.
   */
  tally(cutoffs: readonly number[]): IndexTally {
    if (!this.#options.tally) throw new Error('log index: no tally kept');
    return {
      count: this.#times.length,
      since: cutoffs.map((c) => this.#times.atOrAfter(c)),
      earliest: this.#times.first(),
      skipped: this.#skipped.length,
      groups: [...this.#groups].map(([value, g]) => ({
        value,
        count: g.times.length,
        since: cutoffs.map((c) => g.times.atOrAfter(c)),
        newest: g.newest,
        distinct: [...g.distinct].sort(),
      })),
    };
  }

  get size(): number {
    return this.#offsets.length;
  }

  keyOf(record: JsonRecord): string | undefined {
    return this.#options.key(record);
  }

  /**
   * The positions, ascending, of the records whose key may be `key` (its
   * hashes match): every record with that key is among them, and rarely
   * another. The first of them whose record has the key owns it.
   */
  keyCandidates(key: string): number[] {
    const check = this.#checkHash(key);
    return this.#byKey.candidates(this.#hash(key)).filter((p) => this.#keyChecks.at(p) === check);
  }

  /**
   * Whether a record with `key` may have been indexed: false means it was
   * not; true means one was, or (about one chance in 2^64 per indexed record)
   * another key has the same two 32-bit hashes.
   */
  mayHaveKey(key: string): boolean {
    return this.keyCandidates(key).length > 0;
  }

  /** Whether the lookups of facet `name` are by hash (`uniqueFacets`): candidates to verify. */
  isHashed(name: string): boolean {
    return this.#unique.has(name);
  }

  /** The value of facet `name` (exact or unique) of `record`. */
  facetValue(name: string, record: JsonRecord): string | undefined {
    const valueOf = this.#options.uniqueFacets?.[name] ?? this.#options.facets?.[name];
    if (!valueOf) throw new Error(`log index: no facet ${name}`);
    return valueOf(record);
  }

  /**
   * Positions of the records whose facet `name` is `value`, in file order;
   * for a hashed facet (see `isHashed`), of those whose value may be `value`.
   */
  positions(name: string, value: string): Positions {
    const hashed = this.#unique.get(name);
    if (hashed) return hashed.candidates(this.#hash(value));
    const byValue = this.#facets.get(name);
    if (!byValue) throw new Error(`log index: no facet ${name}`);
    return byValue.get(value) ?? NONE;
  }

  /** The byte range of the record at `position`. */
  span(position: number): { offset: number; length: number } {
    return { offset: this.#offsets.at(position), length: this.#lengths.at(position) };
  }

  /** How many skipped lines start at or after `offset` (all of them for offset 0). */
  skippedFrom(offset: number): number {
    return this.#skipped.length - countBelow(this.#skipped, offset);
  }

  /** How many skipped lines start at or after `from` and before `to`. */
  skippedBetween(from: number, to: number): number {
    return Math.max(0, countBelow(this.#skipped, to) - countBelow(this.#skipped, from));
  }

  /** How many records start before byte `offset`: the position of the first one at or after it. */
  countBefore(offset: number): number {
    return countBelow(this.#offsets, offset);
  }
}

const NONE: Positions = [];

/** How many numbers of ascending `list` are below `value`. */
function countBelow(list: { readonly length: number; at(index: number): number }, value: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list.at(mid) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** How far an insert moves numbers to keep order; a time further out of order is appended and the list sorted when next read. */
const MAX_SHIFT = 32;

/**
 * Times (ms) in ascending order, NaN (no time) counted apart. Appends come
 * nearly in order (an insert moves a few numbers); a log far out of order
 * costs one sort per read, never a quadratic build.
 */
class SortedTimes {
  #values = new Float64Array(16);
  #length = 0;
  #undated = 0;
  #unsorted = false;

  /** Every time inserted, undated ones included. */
  get length(): number {
    return this.#length + this.#undated;
  }

  insert(time: number): void {
    if (Number.isNaN(time)) {
      this.#undated++;
      return;
    }
    if (this.#length === this.#values.length) {
      const bigger = new Float64Array(this.#values.length * 2);
      bigger.set(this.#values);
      this.#values = bigger;
    }
    const values = this.#values;
    let i = this.#length;
    const stop = Math.max(0, i - MAX_SHIFT);
    while (!this.#unsorted && i > stop && (values[i - 1] as number) > time) {
      values[i] = values[i - 1] as number;
      i--;
    }
    if (i === stop && i > 0 && (values[i - 1] as number) > time) {
      // Too far out of order: put the moved numbers back and sort at the next read.
      values.copyWithin(i, i + 1, this.#length + 1);
      i = this.#length;
      this.#unsorted = true;
    }
    values[i] = time;
    this.#length++;
  }

  #sorted(): void {
    if (!this.#unsorted) return;
    this.#values.subarray(0, this.#length).sort();
    this.#unsorted = false;
  }

  /** How many times are at or after `cutoff`. */
  atOrAfter(cutoff: number): number {
    this.#sorted();
    let lo = 0;
    let hi = this.#length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#values[mid] as number) < cutoff) lo = mid + 1;
      else hi = mid;
    }
    return this.#length - lo;
  }

  first(): number | undefined {
    this.#sorted();
    return this.#length ? this.#values[0] : undefined;
  }
}

type NumberArray = Float64Array | Uint32Array | Int32Array;

/** Positions in file order: an exact facet value's list, or a hashed lookup's candidates. */
export interface Positions {
  readonly length: number;
  at(index: number): number | undefined;
}

const BLOCK_BITS = 16;
const BLOCK = 1 << BLOCK_BITS;

/**
 * A growable typed array: the first block doubles up to BLOCK numbers, then
 * further blocks of BLOCK are added, so growing never copies (or frees) more
 * than one block and a long list wastes at most one block's slack.
 */
class NumberList<T extends NumberArray> implements Positions {
  readonly #blocks: T[];
  #length = 0;
  readonly #make: new (length: number) => T;

  constructor(make: new (length: number) => T) {
    this.#make = make;
    this.#blocks = [new make(16)];
  }

  get length(): number {
    return this.#length;
  }

  push(value: number): void {
    const index = this.#length;
    let block = this.#blocks[index >>> BLOCK_BITS];
    if (!block) this.#blocks.push((block = new this.#make(BLOCK)));
    else if ((index & (BLOCK - 1)) === block.length) {
      const bigger = new this.#make(block.length * 2);
      bigger.set(block as never);
      this.#blocks[0] = block = bigger;
    }
    block[index & (BLOCK - 1)] = value;
    this.#length = index + 1;
  }

  /** The number at `index` (0 past the end). */
  at(index: number): number {
    return index < this.#length ? ((this.#blocks[index >>> BLOCK_BITS] as T)[index & (BLOCK - 1)] as number) : 0;
  }
}

/**
 * Positions by the 32-bit hash of a value: the hash of each position, and an
 * open-addressing table (linear probing, power-of-two size, at most half
 * full) of position + 1, 0 marking an empty slot. Entries are never removed.
 */
class HashTable {
  readonly #hashes = new NumberList(Uint32Array);
  #table = new Int32Array(16);
  #count = 0;

  /** Adds `position` (greater than any added before) with hash `hash` (unsigned 32-bit). */
  add(position: number, hash: number): void {
    while (this.#hashes.length < position) this.#hashes.push(0);
    this.#hashes.push(hash >>> 0);
    if (2 * (this.#count + 1) > this.#table.length) this.#grow();
    this.#insert(this.#table, position);
    this.#count++;
  }

  /** The positions, ascending, whose hash is `hash`. */
  candidates(hash: number): number[] {
    hash >>>= 0;
    const table = this.#table;
    const mask = table.length - 1;
    const found: number[] = [];
    for (let slot = hash & mask; table[slot] !== 0; slot = (slot + 1) & mask) {
      const position = (table[slot] as number) - 1;
      if (this.#hashes.at(position) === hash) found.push(position);
    }
    return found.length > 1 ? found.sort((a, b) => a - b) : found;
  }

  #insert(table: Int32Array, position: number): void {
    const mask = table.length - 1;
    let slot = this.#hashes.at(position) & mask;
    while (table[slot] !== 0) slot = (slot + 1) & mask;
    table[slot] = position + 1;
  }

  #grow(): void {
    const old = this.#table;
    const table = new Int32Array(old.length * 2);
    for (let slot = 0; slot < old.length; slot++) {
      const entry = old[slot] as number;
      if (entry !== 0) this.#insert(table, entry - 1);
    }
    this.#table = table;
  }
}
