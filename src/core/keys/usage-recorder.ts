import type { KeyRecord } from './key-store.ts';

const EVERY_MS = 60_000;

/**
 * Records keys' `last_used_at` for a running server: at most once a minute
 * per key, in the background. A write never delays or fails the request
 * that caused it; a failed write is reported to `onError` and tried again
 * on a later use.
 */
export class UsageRecorder {
  readonly #touch: (keyId: string, at: Date) => Promise<void>;
  readonly #onError: (err: unknown) => void;
  readonly #writtenAt = new Map<string, number>();
  readonly #pending = new Set<Promise<void>>();

  /** `touch`: the store's `credentials.touch`. */
  constructor(touch: (keyId: string, at: Date) => Promise<void>, onError: (err: unknown) => void = () => {}) {
    this.#touch = touch;
    this.#onError = onError;
  }

  note(record: KeyRecord, at: Date): void {
    const stored = record.last_used_at ? Date.parse(record.last_used_at) : -Infinity;
    const last = Math.max(stored, this.#writtenAt.get(record.key_id) ?? -Infinity);
    if (at.getTime() - last < EVERY_MS) return;
    this.#writtenAt.set(record.key_id, at.getTime());
    const write = this.#touch(record.key_id, at)
      .catch((err: unknown) => {
        this.#writtenAt.delete(record.key_id);
        this.#onError(err);
      })
      .finally(() => this.#pending.delete(write));
    this.#pending.add(write);
  }

  /** Resolves when every write started so far has finished. */
  async settle(): Promise<void> {
    await Promise.all([...this.#pending]);
  }
}
