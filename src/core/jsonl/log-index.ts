import type { JsonRecord } from './parse-record.ts';

export interface LogIndexOptions {
  /** Whether a parsed JSON object is a record of this log; other lines are counted as skipped. */
  accept: (record: JsonRecord) => boolean;
  /** The record's unique key (the idempotency key); the first record with a key owns it. */
  key: (record: JsonRecord) => string | undefined;
  /** Secondary lookups by name: `board` → the record's board. */
  facets?: Readonly<Record<string, (record: JsonRecord) => string | undefined>>;
}

/**
 * Where each record of a JSONL log sits in the file, and its lookups (by key,
 * by facet value), without the records themselves: a record is read back from
 * its byte range when asked for. Positions count records in file order.
 */
export class LogIndex {
  readonly #options: LogIndexOptions;
  /** Byte offset of each record's line, by position. */
  readonly #offsets: number[] = [];
  /** Byte length of each record's line, without its '\n'. */
  readonly #lengths: number[] = [];
  /** Byte offsets of the lines that are not records, ascending. */
  readonly #skipped: number[] = [];
  readonly #byKey = new Map<string, number>();
  readonly #facets = new Map<string, Map<string, number[]>>();

  constructor(options: LogIndexOptions) {
    this.#options = options;
    for (const name of Object.keys(options.facets ?? {})) this.#facets.set(name, new Map());
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
    if (key !== undefined && !this.#byKey.has(key)) this.#byKey.set(key, position);
    for (const [name, valueOf] of Object.entries(this.#options.facets ?? {})) {
      const value = valueOf(record);
      if (value === undefined) continue;
      const byValue = this.#facets.get(name) as Map<string, number[]>;
      const list = byValue.get(value);
      if (list) list.push(position);
      else byValue.set(value, [position]);
    }
    return record;
  }

  get size(): number {
    return this.#offsets.length;
  }

  keyOf(record: JsonRecord): string | undefined {
    return this.#options.key(record);
  }

  hasKey(key: string): boolean {
    return this.#byKey.has(key);
  }

  /** Position of the record that owns `key`. */
  position(key: string): number | undefined {
    return this.#byKey.get(key);
  }

  /** Positions of the records whose facet `name` is `value`, in file order. */
  positions(name: string, value: string): readonly number[] {
    const byValue = this.#facets.get(name);
    if (!byValue) throw new Error(`log index: no facet ${name}`);
    return byValue.get(value) ?? [];
  }

  /** The byte range of the record at `position`. */
  span(position: number): { offset: number; length: number } {
    return { offset: this.#offsets[position] as number, length: this.#lengths[position] as number };
  }

  /** How many skipped lines start at or after `offset` (all of them for offset 0). */
  skippedFrom(offset: number): number {
    let lo = 0;
    let hi = this.#skipped.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#skipped[mid] as number) < offset) lo = mid + 1;
      else hi = mid;
    }
    return this.#skipped.length - lo;
  }
}
