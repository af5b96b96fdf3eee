// "A condition fires once it has held for `hold`, its recovery once"
// (DESIGN.md 7c), for any watched thing whose observations are stored: a
// node's pulse entries (pulse-alerts.ts), a provider's probes
// (provider-alerts.ts). Pure: derived from the stored observations, oldest
// first, so every reader, every replica and a server after a restart sees
// the same changes, each once.

/** One stored observation of a watched thing: when, the state it saw, and what it says about it (the failing checks, the error). */
export interface Observation<S extends string> {
  ms: number;
  state: S;
  detail: readonly string[];
}

/** A state that held for the hold and so fires: when it fired, the state, its detail by then, and the detail of the state fired before. */
export interface HeldChange<S extends string> {
  ms: number;
  state: S;
  detail: readonly string[];
  before: readonly string[];
}

/**
 * The changes of `observations` (oldest first) up to `nowMs`. The watched
 * thing starts in `normal` (nothing fired); a run of observations of one
 * state that lasts `holdMs` (to the next observation of another state, or
 * to now) fires at its start plus `holdMs` when its state is not the one
 * fired last; `holdMs` 0 fires on the run's first observation. A state
 * that flaps faster than the hold fires nothing more.
 *
 * @example
 *   heldChanges([{ ms: 0, state: 'down', detail: ['timeout'] }], 'up', 60_000, 90_000)
 *   // [{ ms: 60_000, state: 'down', detail: ['timeout'], before: [] }]
 */
export function heldChanges<S extends string>(observations: readonly Observation<S>[], normal: S, holdMs: number, nowMs: number): HeldChange<S>[] {
  const changes: HeldChange<S>[] = [];
  let fired = normal;
  let firedDetail: readonly string[] = [];
  for (let i = 0; i < observations.length; ) {
    const first = observations[i] as Observation<S>;
    let j = i + 1;
    while (j < observations.length && (observations[j] as Observation<S>).state === first.state) j++;
    // The run [i, j) holds from its first observation until the next of another state (or now).
    const until = j < observations.length ? (observations[j] as Observation<S>).ms : nowMs;
    const firesAt = first.ms + holdMs;
    if (first.state !== fired && (holdMs === 0 || until >= firesAt)) {
      // The detail by the time it fires: the run's last observation seen by then.
      let k = i;
      while (k + 1 < j && (observations[k + 1] as Observation<S>).ms <= firesAt) k++;
      const detail = (observations[k] as Observation<S>).detail;
      changes.push({ ms: firesAt, state: first.state, detail, before: firedDetail });
      fired = first.state;
      firedDetail = detail;
    }
    i = j;
  }
  return changes;
}

/** The hold as a message says it: ` for 60 s`, or nothing for a hold of 0. */
export function heldText(holdMs: number): string {
  return holdMs ? ` for ${Math.round(holdMs / 1000)} s` : '';
}

/**
 * The state to derive a window of the newest `window` observations from
 * (oldest first): `normal` when the window holds every observation there
 * is (fewer than `window`), else the window's first state, taken as fired
 * before the window began. So a condition older than the window fires
 * nothing again as the window slides (its event would move with it).
 */
export function windowInitial<S extends string>(observations: readonly Observation<S>[], normal: S, window: number): S {
  return observations.length >= window ? (observations[0] as Observation<S>).state : normal;
}

/** How long the observations of a window span, newest first (those `at` can date). */
function spanMs<T>(items: readonly T[], at: (item: T) => number | undefined): number {
  let newest: number | undefined;
  let oldest: number | undefined;
  for (const item of items) {
    const ms = at(item);
    if (ms === undefined) continue;
    newest = Math.max(newest ?? ms, ms);
    oldest = Math.min(oldest ?? ms, ms);
  }
  return newest === undefined || oldest === undefined ? 0 : newest - oldest;
}

/**
 * The newest window of `limits` (each larger than the one before) that is
 * not full or spans twice `holdMs`, or the largest: `read(limit)` gives
 * the newest `limit` observations, newest first, and whether it was full.
 */
export async function windowSpanningHold<T>(
  limits: readonly number[],
  holdMs: number,
  at: (item: T) => number | undefined,
  read: (limit: number) => Promise<{ items: T[]; full: boolean }>,
): Promise<{ items: T[]; full: boolean; limit: number }> {
  for (let i = 0; ; i++) {
    const limit = limits[i] as number;
    const page = await read(limit);
    if (!page.full || i === limits.length - 1 || spanMs(page.items, at) >= 2 * holdMs) return { ...page, limit };
  }
}
