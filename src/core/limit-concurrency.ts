import { EstateError } from '../errors.ts';

export interface ConcurrencyLimitOptions {
  /** Most calls running at once. */
  maxConcurrent: number;
  /** Most calls waiting for a slot; one more is refused at once. */
  maxQueued: number;
  /** Longest a call waits for a slot before it is refused. */
  maxWaitMs: number;
  /** Most calls of one client running at once (default: maxConcurrent). */
  perClient?: number;
  /** Most calls of one client waiting; one more of its calls is refused at once (default: maxQueued). */
  perClientQueued?: number;
}

interface Waiter {
  start: () => void;
  timer: NodeJS.Timeout;
}

/** The calls of one client: running, and waiting in its own line. */
interface Share {
  running: number;
  queue: Waiter[];
}

/**
 * A semaphore with bounded, time-limited queues, fair between clients:
 * `run(fn, client)` calls `fn` when fewer than `maxConcurrent` calls run and
 * fewer than `perClient` of `client`'s, else waits in `client`'s line. A
 * slot that frees goes to the next client in turn (round robin) that is
 * under its share, first come first served within a client's line; so a
 * client that sends a burst waits behind its own calls, not others behind
 * it. A call that finds all lines full (`maxQueued`) or waits longer than
 * `maxWaitMs` fails with `unavailable` (503), one that finds its client's
 * line full (`perClientQueued`) with `rate_limited` (429), both with a `Retry-After` header and
 * without calling `fn`. So a burst costs at most `maxConcurrent` running
 * calls and `maxQueued` parked promises, whatever its size.
 *
 * @example
 *   const limit = new ConcurrencyLimit({ maxConcurrent: 8, maxQueued: 64, maxWaitMs: 15_000, perClient: 2, perClientQueued: 32 });
 *   const report = await limit.run(() => checkProviders(config.providers, now), 'address:203.0.113.7');
 */
export class ConcurrencyLimit {
  readonly #options: Required<ConcurrencyLimitOptions>;
  /** Clients with calls running or waiting, in turn order: the next slot goes to the first under its share with a call waiting. */
  readonly #shares = new Map<string, Share>();
  #running = 0;
  #queued = 0;

  constructor(options: ConcurrencyLimitOptions) {
    this.#options = { perClient: options.maxConcurrent, perClientQueued: options.maxQueued, ...options };
  }

  /** Calls running now and calls waiting. */
  get load(): { running: number; queued: number } {
    return { running: this.#running, queued: this.#queued };
  }

  /** Runs `fn` for `client` (one shared line when not given); see the class. */
  async run<T>(fn: () => Promise<T>, client = ''): Promise<T> {
    const share = this.#shareOf(client);
    if (this.#running < this.#options.maxConcurrent && share.running < this.#options.perClient) {
      this.#running++;
      share.running++;
    } else {
      try {
        await this.#wait(share);
      } finally {
        this.#forget(client, share);
      }
    }
    try {
      return await fn();
    } finally {
      this.#running--;
      share.running--;
      // The client whose call ended has had its turn: it goes to the end, or away when it has nothing left.
      if (this.#shares.get(client) === share) this.#shares.delete(client);
      if (share.running > 0 || share.queue.length > 0) this.#shares.set(client, share);
      this.#dispatch();
    }
  }

  #shareOf(client: string): Share {
    let share = this.#shares.get(client);
    if (!share) {
      share = { running: 0, queue: [] };
      this.#shares.set(client, share);
    }
    return share;
  }

  /** Drops the share of a client with nothing running or waiting. */
  #forget(client: string, share: Share): void {
    if (share.running === 0 && share.queue.length === 0 && this.#shares.get(client) === share) this.#shares.delete(client);
  }

  /** Resolves holding a slot (given by #dispatch), or rejects without one. */
  #wait(share: Share): Promise<void> {
    if (this.#queued >= this.#options.maxQueued) return Promise.reject(busy());
    if (share.queue.length >= this.#options.perClientQueued) return Promise.reject(yourShare());
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        start: () => {
          clearTimeout(waiter.timer);
          resolve();
        },
        timer: setTimeout(() => {
          const at = share.queue.indexOf(waiter);
          if (at !== -1) {
            share.queue.splice(at, 1);
            this.#queued--;
          }
          reject(busy());
        }, this.#options.maxWaitMs),
      };
      share.queue.push(waiter);
      this.#queued++;
    });
  }

  /** Gives free slots to waiting calls: each to the next client in turn that is under its share. */
  #dispatch(): void {
    while (this.#queued > 0 && this.#running < this.#options.maxConcurrent) {
      let next: [string, Share] | undefined;
      for (const entry of this.#shares) {
        if (entry[1].queue.length > 0 && entry[1].running < this.#options.perClient) {
          next = entry;
          break;
        }
      }
      if (!next) return;
      const [client, share] = next;
      // The client served goes to the end of the turn.
      this.#shares.delete(client);
      this.#shares.set(client, share);
      const waiter = share.queue.shift() as Waiter;
      this.#queued--;
      this.#running++;
      share.running++;
      waiter.start();
    }
  }
}

function busy(): EstateError {
  return new EstateError('unavailable', 'the server is busy with other requests of this kind; try again shortly', { headers: { 'Retry-After': '1' }, overload: true });
}

function yourShare(): EstateError {
  return new EstateError('rate_limited', 'too many requests of this kind from you at once; try again when your earlier ones are answered', {
    headers: { 'Retry-After': '1' },
  });
}
