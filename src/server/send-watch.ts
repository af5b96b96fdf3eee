import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';

/**
 * Cuts the connection of a response whose bytes wait for their client longer
 * than `sendMs`. The clock runs while some of the response's bytes are
 * written but not yet taken by the operating system (`writableLength > 0`)
 * and restarts once none are: a whole answer must drain within `sendMs` of
 * being written, a stream each of its writes. A client that never reads thus
 * holds its connection and the answer's memory for about `sendMs`, not for
 * ever. One timer, running only while there are responses, checks them all a
 * few times per `sendMs`.
 */
export class SendWatch {
  readonly #sendMs: number;
  readonly #periodMs: number;
  /** Watched responses → when their bytes began to wait (undefined while none wait). */
  readonly #responses = new Map<ServerResponse, number | undefined>();
  /** One `close` listener shared by every watched response (it is called on the response): no closure per request. */
  readonly #forget: (this: ServerResponse) => void;
  #timer: NodeJS.Timeout | undefined;

  constructor(sendMs: number) {
    this.#sendMs = sendMs;
    this.#periodMs = Math.min(1000, Math.max(25, Math.floor(sendMs / 4)));
    const responses = this.#responses;
    this.#forget = function (this: ServerResponse) {
      responses.delete(this);
    };
  }

  /** Watches `res` until it closes. */
  watch(res: ServerResponse): void {
    this.#responses.set(res, undefined);
    res.on('close', this.#forget);
    if (!this.#timer) {
      this.#timer = setInterval(() => this.#check(), this.#periodMs);
      this.#timer.unref();
    }
  }

  /** Stops the timer (the server has closed). */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #check(): void {
    const now = performance.now();
    for (const [res, since] of this.#responses) {
      if (res.writableLength === 0) {
        if (since !== undefined) this.#responses.set(res, undefined);
      } else if (since === undefined) {
        this.#responses.set(res, now);
      } else if (now - since >= this.#sendMs) {
        this.#responses.delete(res);
        res.destroy();
      }
    }
    if (this.#responses.size === 0) this.stop();
  }
}
