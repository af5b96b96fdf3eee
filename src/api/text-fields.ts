import { z } from 'zod';

// Field schemas of the write bodies (DESIGN.md section 4): every text has a
// maximum length, and no field that is printed on one line (tables, logs,
// terminals) may hold control characters.

export const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const ONE_LINE = /^[^\x00-\x1f\x7f]*$/;
/** Tabs and line breaks allowed; other control characters (ESC…) not. */
const MULTI_LINE = /^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*$/;

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

/** An optional text of at most `max` characters, line breaks and tabs allowed (null counts as absent). */
export function optionalTextField(max: number, description: string) {
  return z.string().max(max).regex(MULTI_LINE).nullish().meta({ description });
}

/** An optional absolute http(s) URL of at most 2048 characters (null counts as absent). */
export function optionalHttpUrlField(description: string) {
  return z.url({ protocol: /^https?$/ }).max(2048).nullish().meta({ description });
}
