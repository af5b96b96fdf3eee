import type { EstateError, ValidationIssue } from '../errors.ts';
import { optionFlag } from './option-names.ts';

// The one line the CLI prints for an error (`estate: …`), without the
// prefix; the MCP face gives the same text for a tool call that fails.

/** One line: a 422's issues are named by the option or argument they came from. */
export function cliMessage(err: EstateError): string {
  if (err.code === 'internal' && err.cause instanceof Error) return `${err.message}: ${err.cause.message}`;
  if (err.code !== 'validation' || !err.issues?.length) return err.message;
  // Only fields missing (a server's 422): name them all, as a local run does.
  if (err.issues.every((i) => i.type === 'missing' && i.loc.length === 2)) return `missing ${err.issues.map((i) => nameOf(i.loc)).join(', ')}`;
  const [first, ...rest] = err.issues as [ValidationIssue, ...ValidationIssue[]];
  const more = rest.length ? ` (and ${rest.length} more problem${rest.length === 1 ? '' : 's'})` : '';
  return `invalid ${nameOf(first.loc)}: ${first.msg}${more}`;
}

function nameOf(loc: readonly (string | number)[]): string {
  const [where, field] = loc;
  if (field === undefined) return String(where);
  if (where === 'query' || where === 'body') return optionFlag(String(field));
  if (where === 'path') return `<${String(field)}>`;
  return loc.join('.');
}
