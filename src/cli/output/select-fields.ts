import { EstateError } from '../../errors.ts';
import { isPlainObject } from './humanize.ts';

// `--json FIELD,FIELD`, as gh's: the answer's objects with only those fields,
// in the order asked. A list answer ({"items": [...], ...} or a bare array)
// becomes a JSON array of its items so reduced; a single object, that object.
// A field an object lacks is null in it, so every object has the same keys.

/** `ts,node` → ['ts', 'node']; anything else than field names is a usage error. */
export function parseFields(text: string): string[] {
  const fields = text.split(',').map((f) => f.trim());
  if (!fields.every((f) => /^[A-Za-z_][\w-]*$/.test(f))) {
    throw new EstateError('usage', `--json takes field names separated by commas (like --json ts,node), not "${text}"`);
  }
  return [...new Set(fields)];
}

/** The items of a list answer, or undefined for a single object or a scalar. */
export function listItems(body: unknown): unknown[] | undefined {
  if (Array.isArray(body)) return body;
  if (isPlainObject(body) && Array.isArray(body.items)) return body.items;
  return undefined;
}

/**
 * `body` reduced to `fields`. A field no object has is a usage error naming
 * the fields there are (none are known of an empty list: it stays `[]`).
 */
export function selectFields(body: unknown, fields: readonly string[]): unknown {
  const items = listItems(body);
  const objects = (items ?? [body]).filter(isPlainObject);
  if (!items && !objects.length) throw new EstateError('usage', '--json FIELDS needs an answer made of objects; this one is a single value: use --json');
  const known = new Set(objects.flatMap((o) => Object.keys(o)));
  const unknown = fields.filter((f) => !known.has(f));
  if (objects.length && unknown.length) {
    throw new EstateError('usage', `unknown JSON field${unknown.length > 1 ? 's' : ''} ${unknown.map((f) => `"${f}"`).join(', ')}; available fields: ${[...known].join(', ')}`);
  }
  const pick = (item: unknown) => (isPlainObject(item) ? Object.fromEntries(fields.map((f) => [f, f in item ? item[f] : null])) : item);
  return items ? items.map(pick) : pick(body);
}
