import { lstatSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { isNotFound } from '../fs-errors.ts';
import { type LogWatcher, watchFile } from '../watch-log.ts';

export interface WatchedFileOptions {
  /** How old a check may be before `get` looks at the file again, even with no watcher event (default 1000 ms). */
  recheckMs?: number;
  /** Whether to watch the file's directory (default true); without a watcher every `get` re-stats. */
  watch?: boolean;
}

/**
 * A value loaded from one file, reloaded when the file is replaced or
 * changed (another inode, size or mtime). A watcher on the file's directory
 * marks the value stale the moment the file changes; a stat at most every
 * `recheckMs` catches what a watcher can miss (network file systems, a
 * watcher that failed). So a change is seen on the next call after the
 * watcher's event, and within `recheckMs` at worst, with no restart.
 * `load(undefined)` gives the value for a missing file.
 */
export class WatchedFile<T> {
  readonly #file: string;
  readonly #load: (file: string | undefined) => T;
  readonly #recheckMs: number;
  #watcher: LogWatcher | undefined;
  #stale = true;
  #checkedAt = 0;
  #stamp: string | undefined;
  #value: T | undefined;

  constructor(file: string, load: (file: string | undefined) => T, options: WatchedFileOptions = {}) {
    this.#file = file;
    this.#load = load;
    this.#recheckMs = options.recheckMs ?? 1000;
    if (options.watch ?? true) this.#startWatcher();
  }

  get(): T {
    const now = performance.now();
    if (this.#stamp === undefined || this.#stale || !this.#watcher || now - this.#checkedAt >= this.#recheckMs) {
      const stamp = this.#statStamp();
      // A load that throws leaves the value unloaded: the next call tries again.
      if (stamp !== this.#stamp) {
        this.#value = this.#load(stamp === 'missing' ? undefined : this.#file);
        this.#stamp = stamp;
      }
      this.#stale = false;
      this.#checkedAt = now;
    }
    return this.#value as T;
  }

  /** Stops watching; later calls re-stat the file every time. */
  close(): void {
    void this.#watcher?.close();
    this.#watcher = undefined;
  }

  #statStamp(): string {
    try {
      // lstat: a link in the file's place is the loader's to refuse, not followed here.
      const s = lstatSync(this.#file);
      return `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
    } catch (err) {
      if (isNotFound(err)) return 'missing';
      throw err;
    }
  }

  #startWatcher(): void {
    // Not persistent: a forgotten watcher never keeps the process alive.
    this.#watcher = watchFile(this.#file, () => (this.#stale = true), () => (this.#stale = true), { persistent: false });
  }
}
