/**
 * A small cache of async results by key, for answers from slow external
 * sources:
 * - a value is kept for `ttlMs` after it arrived (0: never kept);
 * - concurrent calls for the same key share one load (in-flight coalescing),
 *   and share its failure too;
 * - a failure is never kept: the next call after it loads again;
 * - at most `maxEntries` values are kept; the oldest goes first.
 *
 * @example
 *   const cache = new TtlCache<Repo[]>({ ttlMs: 30_000 });
 *   const repos = await cache.get('repos', () => fetchRepos());
 */
export class TtlCache<T> {
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;
  readonly #values = new Map<string, { value: T; expiresAt: number }>();
  readonly #inFlight = new Map<string, Promise<T>>();

  constructor(options: { ttlMs: number; maxEntries?: number; now?: () => number }) {
    this.#ttlMs = options.ttlMs;
    this.#maxEntries = options.maxEntries ?? 100;
    this.#now = options.now ?? Date.now;
  }

  get(key: string, load: () => Promise<T>): Promise<T> {
    const kept = this.#values.get(key);
    if (kept && kept.expiresAt > this.#now()) return Promise.resolve(kept.value);
    if (kept) this.#values.delete(key);
    const pending = this.#inFlight.get(key);
    if (pending) return pending;
    const loading = (async () => {
      try {
        const value = await load();
        this.#keep(key, value);
        return value;
      } finally {
        this.#inFlight.delete(key);
      }
    })();
    this.#inFlight.set(key, loading);
    return loading;
  }

  /** Forgets every kept value (loads in flight finish and are kept). */
  clear(): void {
    this.#values.clear();
  }

  #keep(key: string, value: T): void {
    if (this.#ttlMs <= 0) return;
    this.#values.delete(key);
    this.#values.set(key, { value, expiresAt: this.#now() + this.#ttlMs });
    while (this.#values.size > this.#maxEntries) {
      const oldest = this.#values.keys().next();
      if (oldest.done) break;
      this.#values.delete(oldest.value);
    }
  }
}
