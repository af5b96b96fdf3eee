import { forgeBodyError, forgeTooLargeError } from './forge-errors.ts';
import { forgeGet, type ForgeInFlight } from './forge-request.ts';
import type { ForgeSettings } from './forge-settings.ts';

/** Most pages one listing reads (50 × 50 = 2,500 items). */
export const MAX_PAGES = 50;
/** A whole listing may take this many times `forge.timeoutMs`. */
export const LISTING_BUDGET = 3;
/** Forgejo's default MAX_RESPONSE_ITEMS: larger pages are cut by the forge anyway. */
export const FORGE_PAGE_SIZE = 50;

export interface ListOptions<T> {
  /** Items per page asked for (the forge may send fewer). */
  pageSize: number;
  /** The items of one page's body, or undefined when the body is not a listing. */
  itemsOf: (body: unknown) => unknown[] | undefined;
  /** Maps a raw item; undefined drops it (e.g. a pull request among issues, or a malformed item). */
  map: (item: unknown) => T | undefined;
  /** Stop once this many items are kept. */
  want?: number;
  notFound?: string;
  /** Requests in flight shared with other listings (see forgeGet). */
  shared?: ForgeInFlight | undefined;
}

export interface Listing<T> {
  items: T[];
  /** True when MAX_PAGES pages were read and the forge had more. */
  truncated: boolean;
  /** Raw items dropped by `map`. */
  dropped: number;
}

/**
 * Reads a Forgejo listing page by page (`page`, `limit`) until the last page:
 * an empty page, no `rel="next"` in the `Link` header, `X-Total-Count` items
 * seen, or (with neither header) a short page. Page numbers are counted here;
 * URLs from `Link` are never followed, so the token stays on the forge's address.
 * Bounded by MAX_PAGES pages, LISTING_BUDGET × `forge.timeoutMs` and
 * `forge.maxBytes` bytes in all (a bad_gateway error past it).
 */
export async function forgeList<T>(forge: ForgeSettings, path: string, query: Record<string, string | number>, options: ListOptions<T>): Promise<Listing<T>> {
  const budgetMs = forge.timeoutMs * LISTING_BUDGET;
  const deadline = { signal: AbortSignal.timeout(budgetMs), budgetMs };
  const items: T[] = [];
  let seen = 0;
  let dropped = 0;
  let bytes = 0;
  for (let page = 1; page <= MAX_PAGES; page++) {
    const answer = await forgeGet(forge, path, { ...query, page, limit: options.pageSize }, { deadline, notFound: options.notFound, shared: options.shared });
    bytes += answer.bytes;
    if (bytes > forge.maxBytes) throw forgeTooLargeError(forge, `/api/v1${path}`, true);
    const raw = options.itemsOf(answer.body);
    if (!raw) throw forgeBodyError(forge, `${path} with a body that is not a list`);
    for (const item of raw) {
      const mapped = options.map(item);
      if (mapped === undefined) dropped++;
      else items.push(mapped);
    }
    seen += raw.length;
    if (options.want !== undefined && items.length >= options.want) return { items: items.slice(0, options.want), truncated: false, dropped };
    if (!hasMore(answer.headers, raw.length, seen, options.pageSize)) return { items, truncated: false, dropped };
  }
  return { items, truncated: true, dropped };
}

function hasMore(headers: Headers, pageLength: number, seen: number, pageSize: number): boolean {
  if (pageLength === 0) return false;
  const link = headers.get('link');
  if (link) return /;\s*rel="?next"?/.test(link);
  const total = Number.parseInt(headers.get('x-total-count') ?? '', 10);
  if (Number.isFinite(total)) return seen < total;
  return pageLength >= pageSize;
}
