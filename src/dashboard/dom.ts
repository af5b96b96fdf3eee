// Building the page from data: text only ever goes in as text (textContent,
// Text nodes), attributes only through setAttribute, styles through the
// CSSOM (the page's CSP allows no inline style or script).

export type Child = Node | string | number | null | undefined | false;
export type Attrs = Record<string, string | number | boolean | undefined>;

/**
 * A new element: `text` sets its text, `class` its class, any other key an
 * attribute (false or undefined leaves it out, true makes it empty); children
 * are appended, strings as text.
 *
 * @example
 *   el('li', { class: 'event' }, el('time', { text: iso }), message)
 */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (name === 'text') e.textContent = String(value);
    else if (name === 'class') e.className = String(value);
    else e.setAttribute(name, value === true ? '' : String(value));
  }
  append(e, children);
  return e;
}

/** Appends children to `parent`, strings and numbers as text. */
export function append(parent: Element, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(typeof child === 'number' ? String(child) : child);
  }
}

/** Replaces every child of `parent`. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}
