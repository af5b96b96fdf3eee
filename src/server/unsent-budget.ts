import type { ServerResponse } from 'node:http';

/** Answers up to this size are always sent: errors, health checks, small pages. */
export const SMALL_ANSWER_BYTES = 64 * 1024;

/**
 * The bytes of answers handed to connections and not yet taken by their
 * clients, all connections together. A large answer is let through only
 * while it fits in `maxBytes` (or while nothing else is held); otherwise the
 * caller answers 503 rather than hold more memory for clients that do not
 * read. Each answer counts until it has drained or its connection closed.
 */
export class UnsentBudget {
  readonly #maxBytes: number;
  #held = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** Bytes counted now. */
  get held(): number {
    return this.#held;
  }

  /** Whether an answer of `bytes` may be sent now: one up to SMALL_ANSWER_BYTES always, a larger one while it fits (or nothing is held). */
  fits(bytes: number): boolean {
    return bytes <= SMALL_ANSWER_BYTES || this.#held === 0 || this.#held + bytes <= this.#maxBytes;
  }

  /**
   * Counts `bytes` of `res`, just sent, until it drains or closes. An answer
   * the operating system took whole as it was sent (most) is not counted,
   * and costs no listener.
   */
  hold(res: ServerResponse, bytes: number): void {
    if (res.writableFinished || res.destroyed) return;
    this.#held += bytes;
    let counted = true;
    const release = () => {
      if (!counted) return;
      counted = false;
      this.#held -= bytes;
    };
    res.once('finish', release);
    res.once('close', release);
  }
}
