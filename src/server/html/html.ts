// Building HTML from data safely: every interpolated value is escaped unless
// it is already SafeHtml (made by `html` itself), so a template cannot forget.

/** Markup that is safe to insert as is: only `html` makes it. */
export class SafeHtml {
  readonly #text: string;

  constructor(text: string) {
    this.#text = text;
  }

  toString(): string {
    return this.#text;
  }
}

const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * Any value as text for HTML content or a quoted attribute value: `& < > " '`
 * become entities; null and undefined become ''.
 *
 * @example
 *   escapeHtml('<script>alert(1)</script>') // '&lt;script&gt;alert(1)&lt;/script&gt;'
 */
export function escapeHtml(value: unknown): string {
  if (value === null || value === undefined) return '';
  return String(value).replace(/[&<>"']/g, (c) => ENTITIES[c] as string);
}

/**
 * A template tag: values are escaped, SafeHtml values are kept, arrays are
 * joined (each item by the same rule), null, undefined and false are ''.
 *
 * @example
 *   html`<li title="${title}">${title}</li>`
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += fragment(value) + (strings[i + 1] ?? '');
  });
  return new SafeHtml(out);
}

function fragment(value: unknown): string {
  if (value instanceof SafeHtml) return value.toString();
  if (Array.isArray(value)) return value.map(fragment).join('');
  if (value === false) return '';
  return escapeHtml(value);
}

/** `url` when it is an absolute http(s) URL (safe as a link target), else undefined: never `javascript:` and the like. */
export function safeHref(url: unknown): string | undefined {
  if (typeof url !== 'string') return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}
