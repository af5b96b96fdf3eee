// Secrets that may travel where they should not (a URL, a request id) by
// mistake: API keys (`est_<key id>_<secret>`) and access tokens (JWTs), also
// when some of their characters are percent-encoded (`est%5F…`, or encoded
// twice, `est%255F…`): a server that decodes a path sees the same key.

const KEY_SHAPED = /est_([0-9a-f]{12})_[A-Za-z0-9_-]+/g;
const TOKEN_SHAPED = /eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g;
/** One percent-encoded byte, possibly encoded again (`%5F`, `%255F`, `%25255F`…). */
const ESCAPE = /%(?:25)*([0-9A-Fa-f]{2})/y;

/** `text` with every API key replaced by `est_<key id>_REDACTED` and every token by `REDACTED`, in clear or percent-encoded. */
export function redactCredentialShapes(text: string): string {
  // Neither shape can be there without one of these (most log strings have none).
  if (!text.includes('est_') && !text.includes('eyJ') && !text.includes('%')) return text;
  const clear = redactClear(text);
  return clear.includes('%') ? redactEncoded(clear) : clear;
}

/** Whether `text` holds something shaped like an API key or an access token. */
export function hasCredentialShape(text: string): boolean {
  return redactCredentialShapes(text) !== text;
}

function redactClear(text: string): string {
  return text.replace(KEY_SHAPED, 'est_$1_REDACTED').replace(TOKEN_SHAPED, 'REDACTED');
}

/**
 * Decodes every escape of an ASCII byte (a malformed escape, or one of a
 * byte above 0x7F, stays as it is: no credential holds one), finds the
 * credentials in the decoded text, and replaces the encoded characters each
 * one came from.
 */
function redactEncoded(text: string): string {
  let decoded = '';
  /** For each character of `decoded`, where its source starts in `text`; one more entry for the end. */
  const starts: number[] = [];
  for (let i = 0; i < text.length; ) {
    starts.push(i);
    ESCAPE.lastIndex = i;
    const escape = ESCAPE.exec(text);
    const byte = escape ? parseInt(escape[1] as string, 16) : 0x80;
    if (escape && byte < 0x80) {
      decoded += String.fromCharCode(byte);
      i = ESCAPE.lastIndex;
    } else {
      decoded += text[i];
      i++;
    }
  }
  starts.push(text.length);
  const found: { from: number; to: number; by: string }[] = [];
  for (const [re, by] of [
    [KEY_SHAPED, (m: RegExpExecArray) => `est_${m[1]}_REDACTED`],
    [TOKEN_SHAPED, () => 'REDACTED'],
  ] as const) {
    for (const m of decoded.matchAll(re)) found.push({ from: m.index, to: m.index + m[0].length, by: by(m) });
  }
  if (!found.length) return text;
  found.sort((a, b) => a.from - b.from);
  let out = '';
  let at = 0;
  for (const { from, to, by } of found) {
    if (from < at) continue;
    out += text.slice(starts[at], starts[from]) + by;
    at = to;
  }
  return out + text.slice(starts[at]);
}
