/** Options every operation command has; an input field of the same name is offered as `--entry-<name>` (`url` → `--entry-url`). */
const COMMON_NAMES = new Set(['url', 'api-key', 'json', 'data-dir', 'config', 'debug']);

/** `max_chars` → `--max-chars`; `url` → `--entry-url` (see COMMON_NAMES). */
export function optionFlag(field: string): string {
  const name = field.replace(/_/g, '-');
  return `--${COMMON_NAMES.has(name) ? `entry-${name}` : name}`;
}

/** `max_chars` → `maxChars`, as commander names the parsed option of optionFlag(field). */
export function optionKey(field: string): string {
  return optionFlag(field)
    .slice(2)
    .replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}
