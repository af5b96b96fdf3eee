import { randomBytes } from 'node:crypto';

// Answers an agent can hold (issue 27): a tool's answer is at most
// PAGE_BYTES of JSON text. A larger answer that is a page of `items` (the
// feeds, the series, the events) is cut to the items that fit, with a
// cursor for the rest, which `next_page` pages through; the rest is kept
// here, not asked for again, so the pages are one answer's even while new
// records arrive. Kept for KEEP_MS, at most KEPT answers (the oldest go
// first): a cursor past that is an error saying to call the tool again.

/** The most bytes of JSON text one tool answer carries. */
export const PAGE_BYTES = 64 * 1024;
/** How long the rest of a cut answer waits for `next_page`. */
const KEEP_MS = 10 * 60_000;
/** How many cut answers are kept at once. */
const KEPT = 64;

/** One page of an answer: its body (the answer's shape, fewer items), its JSON text, and the cursor of the next page when there is one. */
export interface AnswerPage {
  body: unknown;
  text: string;
  next?: { cursor: string; remaining: number; total: number };
}

interface Rest {
  /** The answer, its items left as they are: each page is it with some of them (fields in its order). */
  shell: Record<string, unknown>;
  items: unknown[];
  /** The JSON text length in bytes of each item. */
  sizes: number[];
  total: number;
  expires: number;
  /** Whose answer it is (the credential's key id over HTTP): only they page through it. */
  owner: string;
}

export class AnswerPages {
  readonly #kept = new Map<string, Rest>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** `body` as its first page: itself when its text fits, else the items that fit and a cursor; undefined when it cannot be cut (no `items`, or one item alone is too large). */
  first(body: unknown, owner = ''): AnswerPage | undefined {
    const text = JSON.stringify(body);
    if (Buffer.byteLength(text) <= PAGE_BYTES) return { body, text };
    if (!isPage(body)) return undefined;
    const items = body.items;
    return this.#cut({ shell: body, items, sizes: items.map((i) => Buffer.byteLength(JSON.stringify(i) ?? 'null')), total: items.length, expires: 0, owner });
  }

  /** The page after `cursor`, or undefined when the cursor is unknown, has expired, or is another owner's. */
  next(cursor: string, owner = ''): AnswerPage | undefined {
    this.#forgetExpired();
    const rest = this.#kept.get(cursor);
    if (!rest || rest.owner !== owner) return undefined;
    this.#kept.delete(cursor);
    return this.#cut(rest);
  }

  #cut(rest: Rest): AnswerPage | undefined {
    /** The answer with `items` and a `count` of `n` (when it has one). */
    const page = (items: unknown[], n: number) => {
      const body: Record<string, unknown> = {};
      for (const [field, value] of Object.entries(rest.shell)) body[field] = field === 'items' ? items : field === 'count' && typeof value === 'number' ? n : value;
      return body;
    };
    // The most items whose page fits, from the items' sizes: the page with none, plus each item and a comma between.
    const bare = (n: number) => Buffer.byteLength(JSON.stringify(page([], n)));
    let n = 0;
    let bytes = 0;
    while (n < rest.items.length && bare(n + 1) + bytes + (rest.sizes[n] as number) + n <= PAGE_BYTES) bytes += rest.sizes[n++] as number;
    if (n === 0) return undefined;
    const body = page(rest.items.slice(0, n), n);
    const text = JSON.stringify(body);
    if (n === rest.items.length) return { body, text };
    this.#forgetExpired();
    while (this.#kept.size >= KEPT) this.#kept.delete(this.#kept.keys().next().value as string);
    const cursor = randomBytes(12).toString('base64url');
    this.#kept.set(cursor, { shell: rest.shell, items: rest.items.slice(n), sizes: rest.sizes.slice(n), total: rest.total, expires: this.#now() + KEEP_MS, owner: rest.owner });
    return { body, text, next: { cursor, remaining: rest.items.length - n, total: rest.total } };
  }

  #forgetExpired(): void {
    const now = this.#now();
    for (const [cursor, rest] of this.#kept) if (rest.expires <= now) this.#kept.delete(cursor);
  }
}

function isPage(body: unknown): body is { items: unknown[] } & Record<string, unknown> {
  return typeof body === 'object' && body !== null && Array.isArray((body as { items?: unknown }).items);
}
