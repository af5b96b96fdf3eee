import { displayWidth } from './format-table.ts';

// Text broken into lines between words, for a terminal of a known width:
// doctor's checks and the examples of --help. A word is never cut: one
// longer than a line (a long path) has a line of its own.

export interface WrapOptions {
  /** Columns taken on the first line before the text starts (its label). */
  first?: number | undefined;
  /** Put at the end of every line but the last (` \` for a shell command); its columns are kept free on every line. */
  suffix?: string | undefined;
}

/**
 * `words` in lines of at most `width` columns, one space between words.
 *
 * @example
 *   wrapWords(['fix:', 'check', 'the', 'address'], 12) // ['fix: check', 'the address']
 */
export function wrapWords(words: readonly string[], width: number, options: WrapOptions = {}): string[] {
  const suffix = options.suffix ?? '';
  const room = (lineIndex: number) => width - displayWidth(suffix) - (lineIndex === 0 ? (options.first ?? 0) : 0);
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    if (line && displayWidth(line) + 1 + displayWidth(word) > room(lines.length)) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  lines.push(line);
  return lines.map((l, i) => (i < lines.length - 1 ? `${l}${suffix}` : l));
}

/**
 * A line of prose from `prefix` onward: what follows the prefix wraps within
 * `width`, each further line indented to where the text began (a hanging
 * indent). Without a width, the line as it is.
 *
 * @example
 *   hangingLine('ok    config  ', 'the file is valid', 30) // 'ok    config  the file is\n              valid'
 */
export function hangingLine(prefix: string, text: string, width: number | undefined): string {
  const words = text.split(' ').filter(Boolean);
  if (width === undefined || !words.length) return `${prefix}${text}`;
  const indent = displayWidth(prefix);
  return prefix + wrapWords(words, width - indent).join(`\n${' '.repeat(indent)}`);
}

/**
 * An example command line (`  $ estate …`) wrapped between its shell words,
 * never inside quotes: each line but the last ends in ` \`, so a copy of it
 * still runs, and the next is indented under the command, past the `$`.
 */
export function wrapCommandLine(line: string, width: number): string {
  const match = /^(\s*\$ )(.*)$/.exec(line);
  if (!match || displayWidth(line) <= width) return line;
  const [, prompt = '', command = ''] = match;
  const indent = ' '.repeat(displayWidth(prompt) + 2);
  const words = command.match(/(?:[^\s"']+|"(?:[^"\\]|\\.)*"|'[^']*')+/g) ?? [command];
  const [head = '', ...rest] = wrapWords(words, width - indent.length, { first: displayWidth(prompt) - indent.length, suffix: ' \\' });
  return [prompt + head, ...rest.map((l) => indent + l)].join('\n');
}
