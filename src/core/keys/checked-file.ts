import { lstatSync } from 'node:fs';
import { isNotFound } from '../fs-errors.ts';

/** How long after a file's last change its stat alone cannot prove it unchanged (another write in the same timestamp tick keeps inode, size and times). */
const RACY_MS = 1000;

/**
 * A value parsed from one small file (keys.json, token-secret), checked
 * against the file at every `get`: what `get` returns is never older than
 * the file was when `get` was called, and a file that can no longer be read
 * or parsed throws at once, whatever was parsed before. So a created,
 * revoked or torn credential store, or a deleted token secret, counts from
 * the very next request, with no restart and no watcher to wait for.
 *
 * Each `get` costs one lstat. The file is read again when its stamp (inode,
 * size, mtime, ctime) changed, and also while the text in hand was read less
 * than RACY_MS after the file's last change (git's "racily clean" rule): a
 * write in that same timestamp tick, of the same size, would leave the stamp
 * as it was. The text is compared before it is parsed again.
 *
 * `read` gives the file's text, undefined when there is none, and throws
 * when it cannot be read; `parse` turns that into the value, and throws when
 * the text is not one.
 */
export class CheckedFile<T> {
  readonly #file: string;
  readonly #read: () => string | undefined;
  readonly #parse: (text: string | undefined) => T;
  #held: { stamp: string; ctimeMs: number; readAt: number; text: string | undefined; value: T } | undefined;

  constructor(file: string, read: () => string | undefined, parse: (text: string | undefined) => T) {
    this.#file = file;
    this.#read = read;
    this.#parse = parse;
  }

  get(): T {
    const now = this.#stat();
    const held = this.#held;
    if (held && now && now.stamp === held.stamp && held.readAt - held.ctimeMs >= RACY_MS) return held.value;
    // A read or parse that throws leaves nothing held: the next call looks again.
    this.#held = undefined;
    const readAt = Date.now();
    const text = this.#read();
    const value = held && text === held.text ? held.value : this.#parse(text);
    if (now) this.#held = { stamp: now.stamp, ctimeMs: now.ctimeMs, readAt, text, value };
    return value;
  }

  /** The file's stamp; undefined when it cannot be stat'ed (the read says why). */
  #stat(): { stamp: string; ctimeMs: number } | undefined {
    try {
      // lstat: a link in the file's place is the reader's to refuse, not followed here.
      const s = lstatSync(this.#file);
      return { stamp: `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`, ctimeMs: s.ctimeMs };
    } catch (err) {
      if (isNotFound(err)) return { stamp: 'missing', ctimeMs: -Infinity };
      return undefined;
    }
  }
}
