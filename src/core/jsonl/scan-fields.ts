import type { JsonRecord } from './parse-record.ts';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const COLON = 0x3a;
const COMMA = 0x2c;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

/** The top-level fields to read from lines (`scanFields`), prepared once. */
export class WantedFields {
  readonly #names: string[];
  readonly #bytes: Buffer[];

  constructor(names: readonly string[]) {
    this.#names = [...new Set(names)];
    this.#bytes = this.#names.map((n) => Buffer.from(n, 'utf8'));
  }

  /** The wanted name whose UTF-8 bytes are buf[start, end), if any. */
  match(buf: Buffer, start: number, end: number): string | undefined {
    const length = end - start;
    for (let f = 0; f < this.#bytes.length; f++) {
      const name = this.#bytes[f] as Buffer;
      if (name.length !== length) continue;
      let i = 0;
      while (i < length && name[i] === buf[start + i]) i++;
      if (i === length) return this.#names[f];
    }
    return undefined;
  }
}

/** `scanFields`' answer for a line of JSON whitespace only. */
export const BLANK = Symbol('blank line');

/**
 * Reads the line buf[start, end) (without its '\n') as a JSON object and
 * returns only its top-level `wanted` fields, without building the rest:
 * no line string, no whole record, none of the short strings JSON.parse
 * would intern. Answers only when sure: `BLANK` for JSON whitespace only, a
 * record when the line is a JSON object whose values are strings, numbers,
 * booleans or null (the wanted fields as JSON.parse would give them, the
 * last of a repeated key winning), and undefined for anything else (invalid
 * JSON, nested values, escaped keys, control bytes…): the caller then reads
 * the line the exact way (JSON.parse).
 */
export function scanFields(buf: Buffer, start: number, end: number, wanted: WantedFields): JsonRecord | typeof BLANK | undefined {
  let i = skipSpace(buf, start, end);
  if (i === end) return BLANK;
  if (buf[i] !== LBRACE) return undefined;
  const record: JsonRecord = {};
  i = skipSpace(buf, i + 1, end);
  if (i < end && buf[i] === RBRACE) return skipSpace(buf, i + 1, end) === end ? record : undefined;
  for (;;) {
    if (i >= end || buf[i] !== QUOTE) return undefined;
    const keyEnd = stringEnd(buf, i + 1, end);
    // An escaped key (or a bad one) is left to JSON.parse.
    if (keyEnd < 0 || escaped) return undefined;
    const field = wanted.match(buf, i + 1, keyEnd);
    i = skipSpace(buf, keyEnd + 1, end);
    if (i >= end || buf[i] !== COLON) return undefined;
    i = skipSpace(buf, i + 1, end);
    if (i >= end) return undefined;
    const c = buf[i] as number;
    let value: unknown;
    if (c === QUOTE) {
      const valueEnd = stringEnd(buf, i + 1, end);
      if (valueEnd < 0) return undefined;
      if (field !== undefined) value = escaped ? (JSON.parse(buf.toString('utf8', i, valueEnd + 1)) as string) : buf.toString('utf8', i + 1, valueEnd);
      i = valueEnd + 1;
    } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
      const numberEnd = numberEndAt(buf, i, end);
      if (numberEnd < 0) return undefined;
      if (field !== undefined) value = Number(buf.toString('latin1', i, numberEnd));
      i = numberEnd;
    } else if (isWord(buf, i, end, 'true')) {
      value = true;
      i += 4;
    } else if (isWord(buf, i, end, 'false')) {
      value = false;
      i += 5;
    } else if (isWord(buf, i, end, 'null')) {
      value = null;
      i += 4;
    } else return undefined; // Nested objects and arrays too: JSON.parse checks them.
    if (field !== undefined) record[field] = value;
    i = skipSpace(buf, i, end);
    if (i >= end) return undefined;
    if (buf[i] === COMMA) {
      i = skipSpace(buf, i + 1, end);
      continue;
    }
    if (buf[i] === RBRACE) return skipSpace(buf, i + 1, end) === end ? record : undefined;
    return undefined;
  }
}

/** Whether the last string `stringEnd` read had escapes. */
let escaped = false;

/** The index of the '"' that closes the string whose first byte is at `i`; -1 when it is not a valid JSON string. */
function stringEnd(buf: Buffer, i: number, end: number): number {
  escaped = false;
  for (; i < end; i++) {
    const b = buf[i] as number;
    if (b === QUOTE) return i;
    if (b < 0x20) return -1;
    if (b !== BACKSLASH) continue;
    escaped = true;
    if (++i >= end) return -1;
    const e = buf[i];
    if (e === 0x75) {
      // \uXXXX
      if (i + 4 >= end) return -1;
      for (let h = 1; h <= 4; h++) if (!isHex(buf[i + h] as number)) return -1;
      i += 4;
    } else if (e !== QUOTE && e !== BACKSLASH && e !== 0x2f && e !== 0x62 && e !== 0x66 && e !== 0x6e && e !== 0x72 && e !== 0x74) return -1;
  }
  return -1;
}

/** The end of the JSON number that starts at `i` (-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?); -1 when there is none. */
function numberEndAt(buf: Buffer, i: number, end: number): number {
  if (buf[i] === MINUS) i++;
  if (i >= end) return -1;
  if (buf[i] === ZERO) i++;
  else if (isDigit(buf[i])) while (i < end && isDigit(buf[i])) i++;
  else return -1;
  if (i < end && buf[i] === DOT) {
    i++;
    if (i >= end || !isDigit(buf[i])) return -1;
    while (i < end && isDigit(buf[i])) i++;
  }
  if (i < end && (buf[i] === 0x65 || buf[i] === 0x45)) {
    i++;
    if (i < end && (buf[i] === PLUS || buf[i] === MINUS)) i++;
    if (i >= end || !isDigit(buf[i])) return -1;
    while (i < end && isDigit(buf[i])) i++;
  }
  return i;
}

function isDigit(b: number | undefined): boolean {
  return b !== undefined && b >= ZERO && b <= NINE;
}

function isHex(b: number): boolean {
  return (b >= ZERO && b <= NINE) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
}

function isWord(buf: Buffer, i: number, end: number, word: string): boolean {
  if (i + word.length > end) return false;
  for (let k = 0; k < word.length; k++) if (buf[i + k] !== word.charCodeAt(k)) return false;
  return true;
}

/** Past the JSON whitespace (space, tab, CR, LF) from `i`. */
function skipSpace(buf: Buffer, i: number, end: number): number {
  while (i < end) {
    const b = buf[i];
    if (b !== 0x20 && b !== 0x09 && b !== 0x0d && b !== 0x0a) break;
    i++;
  }
  return i;
}
