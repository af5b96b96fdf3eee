// What the CLI prints from data (tables, lines, error messages) never drives
// the terminal: control characters become visible escapes. `--json` output is
// JSON, escaped by JSON.stringify, and never passes through here.

/**
 * C0 controls, DEL, C1 controls (U+0080–U+009F, 8-bit CSI and OSC among
 * them), line and paragraph separators (U+2028, U+2029), bidi embeddings and
 * overrides (U+202A–U+202E) and isolates (U+2066–U+2069).
 */
const UNSAFE = /[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE_KEEPING_LINES = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * `text` with every unsafe character written as a visible escape: ESC is
 * `\x1b`, U+202E is `\u202e`, a newline `\n`. With `keepLines`, newlines and tabs stay (for
 * multi-line text such as usage messages).
 *
 * @example
 *   escapeControls('\x1b]0;owned\x07ok') // '\\x1b]0;owned\\x07ok'
 */
export function escapeControls(text: string, keepLines = false): string {
  return text.replace(keepLines ? UNSAFE_KEEPING_LINES : UNSAFE, (c) => {
    const named = NAMED[c];
    if (named) return named;
    const code = c.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
