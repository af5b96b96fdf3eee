import type { JsonRecord } from '../../jsonl/parse-record.ts';
import { shareValue } from '../../jsonl/shared-records.ts';
import type { Tally } from '../store.ts';
import type { Notifications } from './notifications.ts';

// What one replica read of a record log (its newest pages, its tallies),
// kept for the next reads until the log changes, as the data dir keeps the
// records it read back: a feed or an aggregate read again costs no query at
// all, where reading, parsing, reordering and serialising each record again
// cost most of a request. The records kept are shared (frozen, their JSON
// text kept once serialised: see shared-records.ts).
//
// The log changes when a write commits, through any replica or process: each
// write NOTIFYs the log's channel in its transaction, and this replica LISTENs
// on it; a notification throws everything kept away. Its own writes do so
// before they resolve. Nothing is kept, and every read asks the database,
// while the LISTEN is not live (before it starts, after its connection was
// lost until it listens again: a write of that gap was not notified), and a
// read that a notification overtook is answered but not kept. So a write is
// in this replica's answers as soon as its notification arrived (PostgreSQL
// sends it at commit, before the writer is told the write is stored).
//
// A process that reads a log only once or twice (a CLI command) does not
// listen: the LISTEN starts at the third read.

/** Pages up to this many records are kept. */
export const MAX_KEPT_PAGE = 1000;
/** Records kept in all, over the pages (the least recently used page goes first). */
const MAX_KEPT_RECORDS = 4096;
/** Reads after which the log is listened on (and its reads kept). */
const READS_BEFORE_LISTENING = 3;

/**
 * A tally with, per cutoff, the span of cutoffs it holds for: after the
 * newest record time before the cutoff, up to the oldest at or after it
 * (null: no such record). Any cutoff in that span counts the same records.
 */
export interface SpannedTally {
  tally: Tally;
  spans: [after: string | null, upTo: string | null][];
}

export class KeptReads {
  readonly #notifications: () => Notifications;
  readonly #channel: string;
  #generation = 0;
  #reads = 0;
  #listening: Promise<void> | undefined;
  #unlisten: (() => void) | undefined;
  #closed = false;
  readonly #pages = new Map<string, JsonRecord[]>();
  #records = 0;
  /** By number of cutoffs (each caller asks for its own). */
  readonly #tallies = new Map<number, SpannedTally>();

  /** `channel`: the one the log's writers NOTIFY. */
  constructor(notifications: () => Notifications, channel: string) {
    this.#notifications = notifications;
    this.#channel = channel;
  }

  /** The log changed (a notification, a write of this process, a lost LISTEN): nothing kept holds. */
  changed(): void {
    this.#generation++;
    this.#pages.clear();
    this.#records = 0;
    this.#tallies.clear();
  }

  /** The page under `key` (at most MAX_KEPT_PAGE records), kept, or from `read` (then kept). */
  async page(key: string, read: () => Promise<JsonRecord[]>): Promise<JsonRecord[]> {
    const live = this.#live();
    const kept = live ? this.#pages.get(key) : undefined;
    if (kept) {
      // The most recently used last.
      this.#pages.delete(key);
      this.#pages.set(key, kept);
      return [...kept];
    }
    const generation = this.#generation;
    const page = (await read()).map((r) => shareValue(r));
    if (live && generation === this.#generation) this.#keepPage(key, page);
    return [...page];
  }

  /** The tally at `cutoffs`, kept when it holds for them, or from `read` (then kept). Frozen: callers read it only. */
  async tally(cutoffs: readonly Date[], read: () => Promise<SpannedTally>): Promise<Tally> {
    const live = this.#live();
    const kept = live ? this.#tallies.get(cutoffs.length) : undefined;
    if (kept && holds(kept, cutoffs)) return kept.tally;
    const generation = this.#generation;
    const fresh = await read();
    shareValue(fresh.tally);
    if (live && generation === this.#generation) this.#tallies.set(cutoffs.length, fresh);
    return fresh.tally;
  }

  /** Ends the LISTEN (one still being set up ends when it is); nothing is kept after. Waits on nothing. */
  close(): void {
    this.#closed = true;
    this.changed();
    const unlisten = this.#unlisten;
    this.#unlisten = undefined;
    unlisten?.();
  }

  /** Whether what is kept holds now: the LISTEN is live (starting it at the third read, listening again after a loss). */
  #live(): boolean {
    if (this.#closed) return false;
    if (!this.#unlisten) {
      if (++this.#reads >= READS_BEFORE_LISTENING) this.#listen();
      return false;
    }
    if (this.#notifications().isLive(this.#channel)) return true;
    void this.#notifications()
      .ensure()
      .catch(() => {});
    return false;
  }

  #listen(): void {
    this.#listening ??= this.#notifications()
      .listen(this.#channel, () => this.changed())
      .then(
        (unlisten) => {
          if (this.#closed) return unlisten();
          this.changed();
          this.#unlisten = unlisten;
        },
        () => {
          // Tried again at the next read.
          this.#listening = undefined;
        },
      );
  }

  #keepPage(key: string, page: JsonRecord[]): void {
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
}

/**
 * Whether `kept` counts the same records at `cutoffs` as at its own: each
 * cutoff within its span. Times compare as the database compared them (byte
 * order, which is JavaScript's for ASCII; other text is never taken as held).
 */
function holds(kept: SpannedTally, cutoffs: readonly Date[]): boolean {
  if (kept.spans.length !== cutoffs.length) return false;
  return cutoffs.every((cutoff, i) => {
    const [after, upTo] = kept.spans[i] as [string | null, string | null];
    const c = cutoff.toISOString();
    if ((after !== null && !ASCII.test(after)) || (upTo !== null && !ASCII.test(upTo))) return false;
    return (after === null || c > after) && (upTo === null || c <= upTo);
  });
}

const ASCII = /^[\x20-\x7e]*$/;
