import { hashString } from './hash-string.ts';
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
  /** Counts kept as records are indexed, for exact aggregates at any size (see `LogIndex.tally`). */
  tally?: TallyOptions;
  /**
   * The top-level fields that `accept`, `key`, the facets and `tally` read.
   * When given, the index is built from these fields alone (scan-fields.ts)
   * rather than from whole parsed records: less garbage and memory while a
   * large log is indexed.
   */
  fields?: readonly string[];
  /**
   * With `fields`: whether the record those fields show needs its whole self
   * for `key` (a record known by its content): such lines are parsed whole.
   */
  whole?: (fields: JsonRecord) => boolean;
  /**
   * The record's time in ms since the epoch (NaN when it has none): kept per
   * record (8 bytes), with each block of TIME_BLOCK records' earliest and
   * latest, so `timeWindow` finds a time range's records without reading any.
   */
  time?: (record: JsonRecord) => number;
}

/** Records per block of the time column's bounds. */
const TIME_BLOCK = 256;

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
 * Memory: per record, only numbers in typed arrays, about 32 bytes for a
 * work completion: its offset (4 bytes: the high part is kept once per
 * 4 GiB; the length is the distance to the next record, kept apart only for
 * the few records followed by lines that are not records), its key's hash
 * and position (8), the same for each unique facet (8), its position in the list of each facet value (4) and, with
 * `tally`, its time (8). Arrays grow by blocks of 16,384 numbers, never by
 * copying a whole one, so building the index frees (and leaves behind)
 * little memory. Keys and unique facet values are kept as hashes, not
 * strings: their lookups return candidate positions, a superset of the true
 * answer (usually exactly it), which the caller verifies against the records
 * it reads back. Facets (few distinct values) stay exact.
 */
export class LogIndex {
  readonly #options: LogIndexOptions;
  readonly #hash: (value: string) => number;
  /** Byte offset of each record's line, by position. */
  readonly #offsets = new Offsets();
  /**
   * A record's byte length (without its '\n') is the distance to the next
   * record's line, except for the last record and those followed by lines
   * that are not records (or blank): their positions, ascending, and lengths.
   */
  readonly #gapped = new NumberList(Uint32Array);
  readonly #gappedLengths = new NumberList(Uint32Array);
  #lastLength = 0;
  /** Byte offsets of the lines that are not records, ascending. */
  readonly #skipped = new NumberList(Float64Array);
  readonly #byKey = new HashIndex();
  readonly #facets = new Map<string, Map<string, NumberList<Int32Array>>>();
  readonly #unique = new Map<string, HashIndex>();
  readonly #facetOf: [string, ValueOf][];
  readonly #uniqueOf: [string, ValueOf][];
  /** The times of the records in no group (`tally.by`), sorted; each group keeps its own. */
  readonly #ungrouped = new SortedTimes();
  readonly #groups = new Map<string, { times: SortedTimes; newest: number; distinct: Set<string> }>();
  /** With `time`: each record's time, and per block of TIME_BLOCK records the earliest and the running latest (the latest of every block up to it). */
  readonly #times = new NumberList(Float64Array);
  readonly #blockMin = new NumberList(Float64Array);
  readonly #runningMax = new NumberList(Float64Array);

  constructor(options: LogIndexOptions) {
    this.#options = options;
    this.#hash = options.hash ?? hashString;
    this.#facetOf = Object.entries(options.facets ?? {});
    this.#uniqueOf = Object.entries(options.uniqueFacets ?? {});
    for (const [name] of this.#facetOf) this.#facets.set(name, new Map());
    for (const [name] of this.#uniqueOf) {
      if (this.#facets.has(name)) throw new Error(`log index: facet ${name} is both exact and unique`);
      this.#unique.set(name, new HashIndex());
    }
  }

  /** Indexes one non-blank line; returns the record when it is one of this log's. */
  addLine(offset: number, length: number, record: JsonRecord | undefined): JsonRecord | undefined {
    if (!record || !this.#options.accept(record)) {
      this.#skipped.push(offset);
      return undefined;
    }
    const position = this.#offsets.length;
    if (position > 0) {
      const previous = this.#offsets.at(position - 1);
      if (previous + this.#lastLength + 1 !== offset) {
        this.#gapped.push(position - 1);
        this.#gappedLengths.push(this.#lastLength);
      }
    }
    this.#offsets.push(offset);
    this.#lastLength = length;
    const key = this.#options.key(record);
    if (key !== undefined) this.#byKey.add(position, this.#hash(key));
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
      if (typeof value === 'string') (this.#unique.get(name) as HashIndex).add(position, this.#hash(value));
    }
    if (this.#options.time) this.#addTime(position, this.#options.time(record));
    const tally = this.#options.tally;
    if (tally) {
      const time = tally.time(record);
      const value = tally.by?.(record);
      if (typeof value === 'string') {
        let group = this.#groups.get(value);
        if (!group) this.#groups.set(value, (group = { times: new SortedTimes(), newest: position, distinct: new Set() }));
        group.times.insert(time);
        group.newest = position;
        const other = tally.distinct?.(record);
        if (typeof other === 'string') group.distinct.add(other);
      } else this.#ungrouped.insert(time);
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
    const groups = [...this.#groups].map(([value, g]) => ({
      value,
      count: g.times.length,
      since: cutoffs.map((c) => g.times.atOrAfter(c)),
      newest: g.newest,
      distinct: [...g.distinct].sort(),
      earliest: g.times.first(),
    }));
    // The totals are the groups' and the ungrouped records' together.
    const sum = (counts: number[]) => counts.reduce((a, b) => a + b, 0);
    const earliest = [this.#ungrouped.first(), ...groups.map((g) => g.earliest)].filter((t): t is number => t !== undefined);
    return {
      count: this.#ungrouped.length + sum(groups.map((g) => g.count)),
      since: cutoffs.map((c, i) => this.#ungrouped.atOrAfter(c) + sum(groups.map((g) => g.since[i] as number))),
      earliest: earliest.length ? Math.min(...earliest) : undefined,
      skipped: this.#skipped.length,
      groups: groups.map(({ earliest: _, ...g }) => g),
    };
  }

  #addTime(position: number, time: number): void {
    this.#times.push(time);
    const block = Math.floor(position / TIME_BLOCK);
    if (block === this.#blockMin.length) {
      this.#blockMin.push(Number.POSITIVE_INFINITY);
      this.#runningMax.push(block > 0 ? this.#runningMax.at(block - 1) : Number.NEGATIVE_INFINITY);
    }
    if (Number.isNaN(time)) return;
    if (time < this.#blockMin.at(block)) this.#blockMin.set(block, time);
    if (time > this.#runningMax.at(block)) this.#runningMax.set(block, time);
  }

  /** The time of the record at `position` (options.time; NaN when it has none). */
  timeAt(position: number): number {
    return this.#times.at(position);
  }

  /**
   * Positions `[lo, hi)` outside which no record's time is in
   * `[fromMs, toMs)` (options.time): lo is the first block whose records
   * reach `fromMs` (a binary search over the running latest), hi the end
   * of the last block holding a record before `toMs` (the blocks after the
   * range looked at from the end). Records inside may still be out of the
   * range (a log a little out of order): check `timeAt`.
   */
  timeWindow(fromMs: number, toMs: number): { lo: number; hi: number } {
    if (!this.#options.time) throw new Error('log index: no time kept');
    const blocks = this.#blockMin.length;
    const first = countBelow(this.#runningMax, fromMs);
    let last = blocks - 1;
    while (last >= first && !(this.#blockMin.at(last) < toMs)) last--;
    if (last < first) return { lo: 0, hi: 0 };
    return { lo: first * TIME_BLOCK, hi: Math.min(this.size, (last + 1) * TIME_BLOCK) };
  }

  get size(): number {
    return this.#offsets.length;
  }

  keyOf(record: JsonRecord): string | undefined {
    return this.#options.key(record);
  }

  /**
   * The positions, ascending, of the records whose key may be `key` (its
   * hash matches): every record with that key is among them, and rarely
   * another (about one in 2^32 per record). The first of them whose record
   * has the key owns it.
   */
  keyCandidates(key: string): number[] {
    return this.#byKey.candidates(this.#hash(key));
  }

  /**
   * Whether a record like `record` (its key, and each unique facet value it
   * has) may have been indexed: false means none was; true means one was,
   * or another record has the same hashes at one position: about one chance
   * in 2^32 per indexed record for each hash compared (2^64 for a log whose
   * records have an id, as the keyed logs' do).
   */
  mayHold(record: JsonRecord): boolean {
    const key = this.#options.key(record);
    if (key === undefined) return false;
    let candidates = this.keyCandidates(key);
    for (const [name, valueOf] of this.#uniqueOf) {
      const value = valueOf(record);
      if (typeof value !== 'string' || !candidates.length) continue;
      const holders = new Set((this.#unique.get(name) as HashIndex).candidates(this.#hash(value)));
      candidates = candidates.filter((p) => holders.has(p));
    }
    return candidates.length > 0;
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

  /** The position lists (each in file order) of the values of exact facet `name` that `accepts` takes. */
  valuePositions(name: string, accepts: (value: string) => boolean): Positions[] {
    if (this.#unique.has(name)) throw new Error(`log index: facet ${name} is hashed: filter it by one value`);
    const byValue = this.#facets.get(name);
    if (!byValue) throw new Error(`log index: no facet ${name}`);
    const lists: Positions[] = [];
    for (const [value, list] of byValue) if (accepts(value)) lists.push(list);
    return lists;
  }

  /** The values of exact facet `name` that indexed records hold, in the order first met. */
  facetValues(name: string): string[] {
    if (this.#unique.has(name)) throw new Error(`log index: facet ${name} is hashed: its values are not kept`);
    const byValue = this.#facets.get(name);
    if (!byValue) throw new Error(`log index: no facet ${name}`);
    return [...byValue.keys()];
  }

  /** The byte range of the record at `position`. */
  span(position: number): { offset: number; length: number } {
    const offset = this.#offsets.at(position);
    if (position >= this.#offsets.length - 1) return { offset, length: position === this.#offsets.length - 1 ? this.#lastLength : 0 };
    const gap = countBelow(this.#gapped, position + 1) - 1;
    const length = gap >= 0 && this.#gapped.at(gap) === position ? this.#gappedLengths.at(gap) : this.#offsets.at(position + 1) - offset - 1;
    return { offset, length };
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
  readonly #values = new NumberList(Float64Array);
  #undated = 0;
  #unsorted = false;

  /** Every time inserted, undated ones included. */
  get length(): number {
    return this.#values.length + this.#undated;
  }

  insert(time: number): void {
    if (Number.isNaN(time)) {
      this.#undated++;
      return;
    }
    const values = this.#values;
    values.push(time);
    if (this.#unsorted) return;
    let i = values.length - 1;
    const stop = Math.max(0, i - MAX_SHIFT);
    while (i > stop && values.at(i - 1) > time) {
      values.set(i, values.at(i - 1));
      i--;
    }
    if (i === stop && i > 0 && values.at(i - 1) > time) {
      // Too far out of order: put the moved numbers back and sort at the next read.
      for (; i < values.length - 1; i++) values.set(i, values.at(i + 1));
      values.set(values.length - 1, time);
      this.#unsorted = true;
      return;
    }
    values.set(i, time);
  }

  #sorted(): void {
    if (!this.#unsorted) return;
    this.#values.sort();
    this.#unsorted = false;
  }

  /** How many times are at or after `cutoff`. */
  atOrAfter(cutoff: number): number {
    this.#sorted();
    return this.#values.length - countBelow(this.#values, cutoff);
  }

  first(): number | undefined {
    this.#sorted();
    return this.#values.length ? this.#values.at(0) : undefined;
  }
}

type NumberArray = Float64Array | Uint32Array | Int32Array;

/** Positions in file order: an exact facet value's list, or a hashed lookup's candidates. */
export interface Positions {
  readonly length: number;
  at(index: number): number | undefined;
}

const BLOCK_BITS = 14;
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

  /** The blocks: number `i` is at `blocks[i >>> BLOCK_BITS][i & (BLOCK - 1)]` (for loops that move many). */
  get blocks(): readonly T[] {
    return this.#blocks;
  }

  /** Replaces the number at `index` (below `length`). */
  set(index: number, value: number): void {
    (this.#blocks[index >>> BLOCK_BITS] as T)[index & (BLOCK - 1)] = value;
  }

  /** Sorts the numbers in ascending order (through one temporary copy). */
  sort(): void {
    const all = new this.#make(this.#length);
    for (let i = 0; i < this.#length; i++) all[i] = this.at(i);
    all.sort();
    for (let i = 0; i < this.#length; i++) this.set(i, all[i] as number);
  }
}

const HIGH = 2 ** 32;

/**
 * Byte offsets, ascending: the low 32 bits of each, and the positions from
 * which the high part takes each new value (none for a file under 4 GiB).
 */
class Offsets {
  readonly #low = new NumberList(Uint32Array);
  readonly #highFrom = new NumberList(Uint32Array);
  readonly #highs = new NumberList(Float64Array);

  get length(): number {
    return this.#low.length;
  }

  push(offset: number): void {
    const high = Math.floor(offset / HIGH);
    if (high !== (this.#highs.length ? this.#highs.at(this.#highs.length - 1) : 0)) {
      this.#highFrom.push(this.#low.length);
      this.#highs.push(high);
    }
    this.#low.push(offset >>> 0);
  }

  at(index: number): number {
    const low = this.#low.at(index);
    if (!this.#highs.length) return low;
    const run = countBelow(this.#highFrom, index + 1) - 1;
    return run < 0 ? low : this.#highs.at(run) * HIGH + low;
  }
}

/**
 * Positions by the 32-bit hash of a value, in 16 parts by the hash's top 4
 * bits (HashRuns each): a part's tail, and the cost of merging it, is a
 * sixteenth of the whole; a log of a million records is indexed without a
 * merge, and each part is sorted when first looked up.
 */
class HashIndex {
  readonly #parts = Array.from({ length: 16 }, () => new HashRuns());

  /** Adds `position` (greater than any added before) with hash `hash`. */
  add(position: number, hash: number): void {
    (this.#parts[(hash >>> 28) & 15] as HashRuns).add(position, hash);
  }

  /** The positions, ascending, whose hash is `hash`. */
  candidates(hash: number): number[] {
    return (this.#parts[(hash >>> 28) & 15] as HashRuns).candidates(hash);
  }
}

/** Tail sizes past which a lookup, or an append, first sorts the tail into the run (see HashRuns). */
const SCAN_TAIL = 8192;
const MIN_MERGE = 1 << 16;
const MAX_MERGE = 1 << 22;

/** The indexes of `values` in the order that sorts them, ties in index order: a radix sort, two passes of 16 bits. */
function sortedOrder(values: Uint32Array): Uint32Array {
  const n = values.length;
  let from = new Uint32Array(n);
  let to = new Uint32Array(n);
  for (let i = 0; i < n; i++) from[i] = i;
  const starts = new Uint32Array(65537);
  for (const shift of [0, 16]) {
    starts.fill(0);
    for (let i = 0; i < n; i++) (starts[(((values[i] as number) >>> shift) & 0xffff) + 1] as number)++;
    for (let b = 0; b < 65536; b++) starts[b + 1] = (starts[b + 1] as number) + (starts[b] as number);
    for (let i = 0; i < n; i++) {
      const index = from[i] as number;
      const bucket = ((values[index] as number) >>> shift) & 0xffff;
      to[starts[bucket] as number] = index;
      starts[bucket] = (starts[bucket] as number) + 1;
    }
    [from, to] = [to, from];
  }
  return from;
}

/**
 * Positions by the 32-bit hash of a value: each entry's hash and position,
 * in two lists. The first `#sorted` entries are a run sorted by hash (then
 * position); later ones (the tail) are in the order added, positions
 * ascending. The tail is sorted and merged into the run, in place, when a
 * lookup finds it longer than SCAN_TAIL, or when it grows past an eighth of
 * the run (at least MIN_MERGE): an entry costs 8 bytes, and a lookup a binary
 * search and a look in a map of the tail's hashes (built by lookups, at most
 * SCAN_TAIL entries, dropped at each merge: a log taking keyed appends looks
 * up each one, and scanning the tail for each cost more than the appends).
 * Entries are never removed.
 */
class HashRuns {
  readonly #hashes = new NumberList(Uint32Array);
  readonly #positions = new NumberList(Uint32Array);
  #sorted = 0;
  /** The tail's positions by hash, for its first `#mapped` entries (a position, or several ascending). */
  #tail = new Map<number, number | number[]>();
  #mapped = 0;

  /** Adds `position` (greater than any added before) with hash `hash` (unsigned 32-bit). */
  add(position: number, hash: number): void {
    this.#hashes.push(hash >>> 0);
    this.#positions.push(position);
    const tail = this.#hashes.length - this.#sorted;
    if (tail >= Math.min(Math.max(MIN_MERGE, this.#sorted >>> 3), MAX_MERGE)) this.#merge();
  }

  /** The positions, ascending, whose hash is `hash`. */
  candidates(hash: number): number[] {
    hash >>>= 0;
    if (this.#hashes.length - this.#sorted > SCAN_TAIL) this.#merge();
    const hashes = this.#hashes;
    let lo = 0;
    let hi = this.#sorted;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (hashes.at(mid) < hash) lo = mid + 1;
      else hi = mid;
    }
    const found: number[] = [];
    for (let i = lo; i < this.#sorted && hashes.at(i) === hash; i++) found.push(this.#positions.at(i));
    // The tail's positions are all above the run's.
    this.#mapTail();
    const tail = this.#tail.get(hash);
    if (typeof tail === 'number') found.push(tail);
    else if (tail) found.push(...tail);
    return found;
  }

  /** Brings the tail's map up to the tail's end. */
  #mapTail(): void {
    const end = this.#hashes.length;
    for (let i = this.#sorted + this.#mapped; i < end; i++) {
      const hash = this.#hashes.at(i);
      const position = this.#positions.at(i);
      const known = this.#tail.get(hash);
      if (known === undefined) this.#tail.set(hash, position);
      else if (typeof known === 'number') this.#tail.set(hash, [known, position]);
      else known.push(position);
    }
    this.#mapped = end - this.#sorted;
  }

  #merge(): void {
    const hashes = this.#hashes;
    const positions = this.#positions;
    const start = this.#sorted;
    const end = hashes.length;
    const count = end - start;
    if (count === 0) return;
    if (this.#mapped) this.#tail = new Map();
    this.#mapped = 0;
    // The tail, sorted by hash; ties keep their order (positions ascending).
    const added = new Uint32Array(count);
    for (let j = 0; j < count; j++) added[j] = hashes.at(start + j);
    const order = sortedOrder(added);
    const tailHashes = new Uint32Array(count);
    const tailPositions = new Uint32Array(count);
    for (let j = 0; j < count; j++) {
      const from = order[j] as number;
      tailHashes[j] = added[from] as number;
      tailPositions[j] = positions.at(start + from);
    }
    // Merged from the back, in place: the run's larger entries move up over the tail's old place.
    const hb = hashes.blocks;
    const pb = positions.blocks;
    const MASK = BLOCK - 1;
    let i = start - 1;
    let j = count - 1;
    let runHash = i >= 0 ? ((hb[i >>> BLOCK_BITS] as Uint32Array)[i & MASK] as number) : -1;
    for (let k = end - 1; j >= 0; k--) {
      const to = k >>> BLOCK_BITS;
      if (runHash > (tailHashes[j] as number)) {
        (hb[to] as Uint32Array)[k & MASK] = runHash;
        (pb[to] as Uint32Array)[k & MASK] = (pb[i >>> BLOCK_BITS] as Uint32Array)[i & MASK] as number;
        i--;
        runHash = i >= 0 ? ((hb[i >>> BLOCK_BITS] as Uint32Array)[i & MASK] as number) : -1;
      } else {
        (hb[to] as Uint32Array)[k & MASK] = tailHashes[j] as number;
        (pb[to] as Uint32Array)[k & MASK] = tailPositions[j] as number;
        j--;
      }
    }
    this.#sorted = end;
  }
}
