import type { JsonRecord } from '../jsonl/parse-record.ts';
import type { Series, SeriesName } from '../store/store.ts';

// The windows the events are derived from (events/estate-events.ts): a
// node's newest N records of a series, in write order. `plainWindows` reads
// each one whole every time (/events); `KeptWindows` keeps each one, as what
// the derivation takes of it, between the passes of the event recorder and
// reads only what was written since, so a pass over a hub whose nodes add a
// record or two between passes reads a few records per node, not 200.

export interface SeriesWindow<T> {
  /** What `map` made of each record, newest first (write order). */
  items: T[];
  /** The read held `limit` records: older ones may exist. */
  full: boolean;
}

export interface SeriesWindows {
  /** The newest `limit` records of `node` in `series`, each through `map` (the same `map` for a series and limit, every call). */
  window<T>(series: SeriesName, node: string, limit: number, map: (record: JsonRecord) => T): Promise<SeriesWindow<T>>;
}

/** Every window read whole from `series`. */
export function plainWindows(series: Pick<Series, 'newest'>): SeriesWindows {
  return {
    window: async (name, node, limit, map) => {
      const { items } = await series.newest(name, limit, { node });
      return { items: items.map(map), full: items.length >= limit };
    },
  };
}

/** The first read of what was written since a window was kept; four times more each time the window's newest record is not among it. */
const FIRST_READ = 4;

/** The newest records of a window kept as text, to find where it stood: more than one, so a record written again just after it is not taken for it. */
const ANCHOR = 3;

interface Kept {
  /** Its newest ANCHOR records (fewer if it holds fewer) as JSON text, newest first: where the window stood. */
  anchor: string[];
  items: unknown[];
  full: boolean;
}

/**
 * Windows kept between passes. For a log appended in write order (the data
 * dir's: a record written later is always after the earlier ones), the
 * newest `limit` records are those written since the kept window's newest
 * record followed by the window itself, cut to `limit`. A window whose
 * newest record is gone (the log rewritten) is read whole, and every
 * `fullEvery` passes all are (a prune may have removed records of a window
 * whose newest is still there). Not for PostgreSQL, whose rows of
 * concurrent writers may become visible out of their order.
 */
export class KeptWindows implements SeriesWindows {
  readonly #series: Pick<Series, 'newest'>;
  readonly #fullEvery: number;
  #kept = new Map<string, Kept>();
  #read = new Set<string>();
  #passes = 0;

  constructor(series: Pick<Series, 'newest'>, fullEvery = 60) {
    this.#series = series;
    this.#fullEvery = fullEvery;
  }

  /** Starts a pass: the windows not read in the last pass are let go, and every `fullEvery` passes all are. */
  beginPass(): void {
    if (++this.#passes % this.#fullEvery === 0) this.#kept.clear();
    else for (const key of this.#kept.keys()) if (!this.#read.has(key)) this.#kept.delete(key);
    this.#read.clear();
  }

  async window<T>(name: SeriesName, node: string, limit: number, map: (record: JsonRecord) => T): Promise<SeriesWindow<T>> {
    const key = JSON.stringify([name, node, limit]);
    this.#read.add(key);
    const kept = this.#kept.get(key);
    if (kept) {
      for (let n = Math.min(FIRST_READ, limit); ; n = Math.min(n * 4, limit)) {
        const { items } = await this.#series.newest(name, n, { node });
        const texts = items.map((r) => JSON.stringify(r));
        const whole = items.length < n;
        // Where the kept newest records start, all of them in order; undefined when the read is too short to tell.
        let at: number | undefined = -1;
        for (let i = 0; i < texts.length; i++) {
          if (texts[i] !== kept.anchor[0]) continue;
          if (!whole && i + kept.anchor.length > texts.length) {
            at = undefined;
            break;
          }
          if (kept.anchor.every((text, j) => texts[i + j] === text)) {
            at = i;
            break;
          }
        }
        if (at !== undefined && at >= 0) {
          const all = [...items.slice(0, at).map(map), ...(kept.items as T[])];
          const anchor = [...texts.slice(0, at), ...kept.anchor].slice(0, ANCHOR);
          const window = { anchor, items: all.slice(0, limit), full: kept.full || all.length >= limit };
          this.#kept.set(key, window);
          return { items: window.items, full: window.full };
        }
        if (whole || n >= limit) break;
      }
    }
    const { items } = await this.#series.newest(name, limit, { node });
    const window = { anchor: items.slice(0, ANCHOR).map((r) => JSON.stringify(r)), items: items.map(map), full: items.length >= limit };
    if (items.length) this.#kept.set(key, window);
    else this.#kept.delete(key);
    return { items: window.items, full: window.full };
  }
}
