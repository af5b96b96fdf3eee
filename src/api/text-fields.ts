import { z } from 'zod';
import { describedPattern } from './pattern-text.ts';

// Field schemas of the write bodies (DESIGN.md section 4): every text has a
// maximum length, and no field that is printed on one line (tables, logs,
// terminals) may hold control characters: C0 (U+0000–U+001F), DEL, C1
// (U+0080–U+009F, where a terminal reads CSI and OSC too) or the bidi
// overrides and isolates (U+202A–U+202E, U+2066–U+2069) that reorder what
// is shown. A refused field is 422 `string_pattern_mismatch`.

export const SLUG = describedPattern(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'a slug: lowercase letters, digits and hyphens (no hyphen at either end or twice in a row)');
const ONE_LINE = describedPattern(/^[^\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]*$/, 'one line of text, without control characters or bidirectional overrides');
/** Tabs and line breaks allowed; other control characters (ESC, C1…) and bidi overrides not. */
const MULTI_LINE = describedPattern(
  /^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]*$/,
  'text without control characters or bidirectional overrides (line breaks and tabs are allowed)',
);

/** A slug: lowercase letters and digits in words joined by single hyphens, 1–64 characters. */
export function slugField(description: string) {
  return z.string().min(1).max(64).regex(SLUG).meta({ description, examples: ['ops'] });
}

/** An optional slug (a filter). */
export function optionalSlugField(description: string) {
  return z.string().min(1).max(64).regex(SLUG).optional().meta({ description, examples: ['ops'] });
}

/** A non-empty one-line text of at most `max` characters. */
export function lineField(max: number, description: string) {
  return z.string().min(1).max(max).regex(ONE_LINE).meta({ description });
}

/** An optional non-empty one-line text of at most `max` characters. */
export function optionalLineField(max: number, description: string) {
  return z.string().min(1).max(max).regex(ONE_LINE).optional().meta({ description });
}

/** An optional text of at most `max` characters, line breaks and tabs allowed (null counts as absent). */
export function optionalTextField(max: number, description: string) {
  return z.string().max(max).regex(MULTI_LINE).nullish().meta({ description });
}

/**
 * An optional absolute http(s) URL of at most 2048 characters (null counts as
 * absent), on one line like `lineField`: the control characters are refused
 * before the URL is parsed, which would drop tabs and line breaks silently.
 */
export function optionalHttpUrlField(description: string) {
  return z
    .string()
    .max(2048)
    .regex(ONE_LINE, { abort: true })
    .check(z.url({ protocol: /^https?$/ }))
    .nullish()
    .meta({ description });
}
