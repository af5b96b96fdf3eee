// What a value that fails a schema's pattern should have been, in words: a
// 422 `msg` names the shape ("a slug: lowercase letters, digits and
// hyphens"), never the regex. The `type` stays `string_pattern_mismatch`.

const TEXTS = new Map<string, string>();

/** `re`, registered with what it accepts, in words that follow "should be". */
export function describedPattern(re: RegExp, text: string): RegExp {
  TEXTS.set(String(re), text);
  return re;
}

/** The words registered for a pattern as zod reports it (`/^…$/flags`), if any. */
export function patternText(pattern: string): string | undefined {
  return TEXTS.get(pattern);
}
