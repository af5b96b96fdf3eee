import { EstateError } from '../errors.ts';

export interface ConcurrencyLimitOptions {
  /** Most calls running at once. */
  maxConcurrent: number;
  /** Most calls waiting for a slot; one more is refused at once. */
  maxQueued: number;
  /** Longest a call waits for a slot before it is refused. */
  maxWaitMs: number;
}

interface Waiter {
  start: () => void;
  timer: NodeJS.Timeout;
}

/**
 * A semaphore with a bounded, time-limited queue: `run(fn)` calls `fn` when
 * fewer than `maxConcurrent` calls run, else waits in line (first come,
 * first served). A call that finds the queue full, or waits longer than
 * `maxWaitMs`, fails with `unavailable` (503) and a `Retry-After` header,
 * without calling `fn`. So a burst costs at most `maxConcurrent` running
 * calls and `maxQueued` parked promises, whatever its size.
 *
 * @example
 *   const limit = new ConcurrencyLimit({ maxConcurrent: 4, maxQueued: 32, maxWaitMs: 10_000 });
 *   const report = await limit.run(() => checkProviders(config.providers, now));
 */
export class ConcurrencyLimit {
  readonly #options: ConcurrencyLimitOptions;
  readonly #queue: Waiter[] = [];
  #running = 0;

  constructor(options: ConcurrencyLimitOptions) {
    this.#options = options;
  }

  /** Calls running now and calls waiting. */
  get load(): { running: number; queued: number } {
    return { running: this.#running, queued: this.#queue.length };
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#running >= this.#options.maxConcurrent) await this.#wait();
    else this.#running++;
    try {
      return await fn();
    } finally {
      this.#release();
    }
  }

  /** Resolves holding a slot (handed over by #release), or rejects without one. */
  #wait(): Promise<void> {
    if (this.#queue.length >= this.#options.maxQueued) return Promise.reject(busy());
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        start: () => {
          clearTimeout(waiter.timer);
          resolve();
        },
        timer: setTimeout(() => {
          const at = this.#queue.indexOf(waiter);
          if (at !== -1) this.#queue.splice(at, 1);
          reject(busy());
        }, this.#options.maxWaitMs),
      };
      this.#queue.push(waiter);
    });
  }

  #release(): void {
    const next = this.#queue.shift();
    // The slot passes straight to the next in line: #running stays the same.
    if (next) next.start();
    else this.#running--;
  }
}

function busy(): EstateError {
  return new EstateError('unavailable', 'the server is busy with other requests of this kind; try again shortly', { headers: { 'Retry-After': '1' } });
}
