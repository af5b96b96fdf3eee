import type { SeriesSample } from '../store/store.ts';

// What a hub checks of the samples sent to it (DESIGN.md 7a) beyond their
// types, which the operation's schema checks: every part's `ts` an ISO 8601
// date-time with its offset, at most five minutes ahead of the hub's clock;
// the parts of one sample of one node and one instant.

/** How far ahead of the hub's clock a sample's `ts` may be (clocks drift; a sample from the future is refused). */
export const MAX_FUTURE_MS = 5 * 60_000;

/** A problem of one field, at its path inside the list of samples: `[3, 'disks', 0, 'ts']`. */
export interface SampleProblem {
  path: (string | number)[];
  msg: string;
  /** A pydantic v2 error code (HTTPValidationError `type`). */
  type: 'datetime_parsing' | 'datetime_past' | 'value_error';
}

/** An ISO 8601 date-time in RFC 3339's profile: date, `T`, time to the second (any fraction), `Z` or an offset. */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

/** The instant `text` names in ms since the epoch, or undefined when it is no ISO 8601 date-time (a 30 February, a 25th hour, no offset). */
export function parseDateTime(text: string): number | undefined {
  const m = DATE_TIME.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second, offH, offM] = m.slice(1).map((n) => (n === undefined ? 0 : Number(n))) as number[];
  const date = new Date(Date.UTC(year as number, (month as number) - 1, day as number));
  if (date.getUTCMonth() !== (month as number) - 1 || date.getUTCDate() !== day) return undefined;
  if ((hour as number) > 23 || (minute as number) > 59 || (second as number) > 59 || (offH as number) > 23 || (offM as number) > 59) return undefined;
  const at = Date.parse(text);
  return Number.isFinite(at) ? at : undefined;
}

/**
 * The samples as a hub stores them: every `ts` in one form,
 * `toISOString()`'s (UTC, milliseconds), so a sample sent again with another
 * offset is still known by its node and ts, and the series stay in time
 * order as text; or the problems that refuse them, each at its path.
 */
export function checkSamples(samples: readonly SeriesSample[], now: Date): { samples: SeriesSample[] } | { problems: SampleProblem[] } {
  const problems: SampleProblem[] = [];
  const latest = now.getTime() + MAX_FUTURE_MS;
  const instant = (ts: string, path: (string | number)[]): number | undefined => {
    const at = parseDateTime(ts);
    if (at === undefined) problems.push({ path, msg: 'Input should be a valid datetime: ISO 8601 with its offset, like 2026-11-21T13:05:00.000Z', type: 'datetime_parsing' });
    else if (at > latest) problems.push({ path, msg: `Input should be in the past: at most ${MAX_FUTURE_MS / 60_000} minutes ahead of the hub's clock (${now.toISOString()})`, type: 'datetime_past' });
    return at;
  };
  const stored = samples.map((sample, i) => {
    const at = instant(sample.trend.ts, [i, 'trend', 'ts']);
    const node = sample.trend.node;
    const same = (part: { ts: string; node: string }, path: (string | number)[]) => {
      const partAt = instant(part.ts, [...path, 'ts']);
      if (part.node !== node) problems.push({ path: [...path, 'node'], msg: `Value error, every part of a sample has its trend point's node ("${node}")`, type: 'value_error' });
      if (at !== undefined && partAt !== undefined && partAt !== at) problems.push({ path: [...path, 'ts'], msg: `Value error, every part of a sample has its trend point's ts (${sample.trend.ts})`, type: 'value_error' });
    };
    sample.disks.forEach((disk, j) => same(disk, [i, 'disks', j]));
    same(sample.pulse, [i, 'pulse']);
    const ts = at === undefined ? sample.trend.ts : new Date(at).toISOString();
    return { trend: { ...sample.trend, ts }, disks: sample.disks.map((d) => ({ ...d, ts })), pulse: { ...sample.pulse, ts } };
  });
  return problems.length ? { problems } : { samples: stored };
}
