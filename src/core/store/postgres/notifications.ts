import type { Sql } from './connect.ts';

/**
 * LISTEN on one dedicated connection (its own pool of one, which the driver
 * reconnects on the next query). `listen` resolves once the server listens;
 * after the connection is lost every channel's `wake` is called and
 * `ensure()` (a subscriber's periodic check) listens again, so a reader that
 * catches up by event id on each wake misses nothing across reconnects.
 */
export class Notifications {
  readonly #sql: Sql;
  readonly #channels = new Map<string, Set<() => void>>();
  /** Channels the current connection listens on. */
  readonly #live = new Set<string>();
  #ensuring: Promise<void> | undefined;
  /** Counts lost connections: a LISTEN answered across a loss does not count as live. */
  #generation = 0;

  /** `sql`: a pool of one connection, created with `onNotify`/`onClose` below wired to this object. */
  constructor(sql: Sql) {
    this.#sql = sql;
  }

  /** For the pool's `onnotify`. */
  onNotify(channel: string): void {
    for (const wake of this.#channels.get(channel) ?? []) wake();
  }

  /** For the pool's `onclose`: nothing listens any more until `ensure()`. */
  onClose(): void {
    this.#generation++;
    this.#live.clear();
    for (const wakes of this.#channels.values()) for (const wake of wakes) wake();
  }

  /** Whether the current connection listens on `channel` (a notification sent now reaches its `wake`). */
  isLive(channel: string): boolean {
    return this.#live.has(channel);
  }

  /**
   * Calls `wake` on each notification of `channel`; resolves once the server
   * listens. The answer ends it at once: the UNLISTEN is sent without waiting
   * (a notification with no wake left is ignored), so closing never waits on
   * a connection that is down.
   */
  async listen(channel: string, wake: () => void): Promise<() => void> {
    let wakes = this.#channels.get(channel);
    if (!wakes) this.#channels.set(channel, (wakes = new Set()));
    const own = () => wake();
    wakes.add(own);
    try {
      await this.ensure();
    } catch (err) {
      wakes.delete(own);
      throw err;
    }
    return () => {
      const set = this.#channels.get(channel);
      set?.delete(own);
      if (set?.size === 0) {
        this.#channels.delete(channel);
        if (this.#live.delete(channel)) void this.#sql`UNLISTEN ${this.#sql(channel)}`.catch(() => {});
      }
    };
  }

  /** Listens on every channel with a subscriber that is not listened on yet. Concurrent calls share one pass. */
  ensure(): Promise<void> {
    // Cleared when the pass ends, never before it is set (a pass with nothing to do ends at once).
    this.#ensuring ??= this.#listenOnAll().finally(() => {
      this.#ensuring = undefined;
    });
    return this.#ensuring;
  }

  async #listenOnAll(): Promise<void> {
    for (const channel of [...this.#channels.keys()]) {
      if (this.#live.has(channel) || !this.#channels.has(channel)) continue;
      const generation = this.#generation;
      await this.#sql`LISTEN ${this.#sql(channel)}`;
      if (generation === this.#generation) this.#live.add(channel);
    }
  }

  close(): Promise<void> {
    this.#channels.clear();
    this.#live.clear();
    return this.#sql.end({ timeout: 1 });
  }
}
