import type { ServerResponse } from 'node:http';
import { EstateError } from '../errors.ts';

/** Answers up to this size are always sent: errors, health checks, small pages. */
export const SMALL_ANSWER_BYTES = 64 * 1024;

/**
 * The bytes of answers handed to connections and not yet taken by their
 * clients, all connections together and per client. A large answer is let
 * through only while it fits in `maxBytes` (or while nothing else is held)
 * and in its client's `maxPerClient` (or while that client holds nothing);
 * otherwise the caller answers 503, or 429 when it is the client's own
 * unread answers that hold its share, rather than hold more memory for
 * clients that do not read. So one client's unread answers take at most its
 * share, never the whole budget. Each answer counts until it has drained
 * or its connection closed.
 */
export class UnsentBudget {
  readonly #maxBytes: number;
  readonly #maxPerClient: number;
  #held = 0;
  /** Bytes held per client, for the clients that hold any. */
  readonly #byClient = new Map<string, number>();

  constructor(maxBytes: number, maxPerClient = maxBytes) {
    this.#maxBytes = maxBytes;
    this.#maxPerClient = maxPerClient;
  }

  /** Bytes counted now, in all or of `client`. */
  held(client?: string): number {
    return client === undefined ? this.#held : (this.#byClient.get(client) ?? 0);
  }

  /**
   * Why an answer of `bytes` to `client` may not be sent now: `unavailable`
   * (503) past the whole budget, `rate_limited` (429) past the client's
   * share, both with `Retry-After`; undefined when it may. An answer up to
   * SMALL_ANSWER_BYTES always may.
   */
  refusal(bytes: number, client = ''): EstateError | undefined {
    if (bytes <= SMALL_ANSWER_BYTES) return undefined;
    if (this.#held > 0 && this.#held + bytes > this.#maxBytes) {
      return new EstateError('unavailable', 'the server is holding too many unread answers; try again later', { headers: { 'Retry-After': '1' }, overload: true });
    }
    const mine = this.#byClient.get(client) ?? 0;
    if (mine > 0 && mine + bytes > this.#maxPerClient) {
      return new EstateError('rate_limited', 'too many of your answers are still unread; read them, then try again', { headers: { 'Retry-After': '1' } });
    }
    return undefined;
  }

  /**
   * Counts `bytes` of `res`, just sent to `client`, until it drains or
   * closes. An answer the operating system took whole as it was sent (most)
   * is not counted, and costs no listener.
   */
  hold(res: ServerResponse, bytes: number, client = ''): void {
    if (res.writableFinished || res.destroyed) return;
    this.#held += bytes;
    this.#byClient.set(client, (this.#byClient.get(client) ?? 0) + bytes);
    let counted = true;
    const release = () => {
      if (!counted) return;
      counted = false;
      this.#held -= bytes;
      const left = (this.#byClient.get(client) ?? 0) - bytes;
      if (left > 0) this.#byClient.set(client, left);
      else this.#byClient.delete(client);
    };
    res.once('finish', release);
    res.once('close', release);
  }
}
