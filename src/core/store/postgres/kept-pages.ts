import type { JsonRecord } from '../../jsonl/parse-record.ts';
import { shareValue } from '../../jsonl/shared-records.ts';

// The newest pages of a record log (the feeds), kept by one replica for the
// next reads while the log is unchanged, as the data dir keeps the records it
// read back: a feed read again costs one small query (the log's newest event
// id: a step down its primary key) instead of reading, parsing, reordering and
// serialising each record again. The records kept are shared (frozen, their
// JSON text kept once serialised: see shared-records.ts).
//
// Unchanged means the newest event id is the one the page was read at:
// writers give event ids in commit order under the log's lock, so a write
// committed anywhere, by any replica or process, changes it. Each read asks
// the database, and only asks through a check that began after the read did:
// a write acknowledged before a read began is in what it answers, on every
// replica, with no wait for a notification. Reads that arrive while a check
// is under way share the next one, so the checks stay at most one at a time.

/** Pages up to this many records are kept. */
export const MAX_KEPT_PAGE = 1000;
/** Records kept in all, over the pages (the oldest used page goes first). */
const MAX_KEPT_RECORDS = 4096;

export class KeptPages {
  readonly #newestEvent: () => Promise<string>;
  #version: string | undefined;
  readonly #pages = new Map<string, JsonRecord[]>();
  #records = 0;
  #checking: Promise<string> | undefined;
  #next: Promise<string> | undefined;

  /** `newestEvent`: the log's newest event id now ('0' when it is empty). */
  constructor(newestEvent: () => Promise<string>) {
    this.#newestEvent = newestEvent;
  }

  /**
   * The page under `key` (of at most MAX_KEPT_PAGE records), from those kept
   * while the log is unchanged, else from `read` (then kept, its records shared).
   */
  async page(key: string, read: () => Promise<JsonRecord[]>): Promise<JsonRecord[]> {
    const version = await this.#check();
    if (version === this.#version) {
      const kept = this.#pages.get(key);
      if (kept) {
        // The most recently used last.
        this.#pages.delete(key);
        this.#pages.set(key, kept);
        return [...kept];
      }
    }
    // Read after the check: the page holds every record of `version` (and maybe newer ones: then the next check misses).
    const page = (await read()).map((r) => shareValue(r));
    if (this.#version === undefined || BigInt(version) > BigInt(this.#version)) {
      this.#pages.clear();
      this.#records = 0;
      this.#version = version;
    }
    // A read that a newer one overtook is answered, not kept.
    if (version === this.#version) this.#keep(key, page);
    return [...page];
  }

  #keep(key: string, page: JsonRecord[]): void {
    this.#records -= this.#pages.get(key)?.length ?? 0;
    this.#pages.delete(key);
    this.#pages.set(key, page);
    this.#records += page.length;
    for (const [k, kept] of this.#pages) {
      if (this.#records <= MAX_KEPT_RECORDS || k === key) break;
      this.#pages.delete(k);
      this.#records -= kept.length;
    }
  }

  /** The newest event id, from a check that began after this call. */
  #check(): Promise<string> {
    if (!this.#checking) return this.#start();
    this.#next ??= this.#checking
      .catch(() => undefined)
      .then(() => {
        this.#next = undefined;
        return this.#start();
      });
    return this.#next;
  }

  #start(): Promise<string> {
    const checking = this.#newestEvent();
    this.#checking = checking;
    const done = () => {
      if (this.#checking === checking) this.#checking = undefined;
    };
    checking.then(done, done);
    return checking;
  }
}
