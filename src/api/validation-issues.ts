import type { z } from 'zod';
import type { ValidationIssue } from '../errors.ts';
import { patternText } from './pattern-text.ts';

// zod 4 issues → pydantic v2 style ValidationError entries. The `type` codes and
// the wording of `msg` follow pydantic so clients written for the original
// service keep working, except that a pattern is named in words (pattern-text.ts).

type Where = 'query' | 'path' | 'body';

export function toValidationIssues(where: Where, issues: readonly z.core.$ZodIssue[]): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  for (const issue of issues) {
    const loc = [where, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push({ loc: [...loc, key], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
      continue;
    }
    out.push({ loc, ...describe(issue, where) });
  }
  return out;
}

function isMissing(issue: z.core.$ZodIssue): boolean {
  return !('input' in issue) || issue.input === undefined;
}

function describe(issue: z.core.$ZodIssue, where: Where): { msg: string; type: string } {
  if (isMissing(issue) && (issue.code === 'invalid_type' || issue.code === 'invalid_value')) {
    return { msg: 'Field required', type: 'missing' };
  }
  switch (issue.code) {
    case 'invalid_type':
      return describeType(issue.expected, where);
    case 'too_small':
      return describeBound(issue.origin, 'min', Number(issue.minimum), issue.inclusive !== false);
    case 'too_big':
      return describeBound(issue.origin, 'max', Number(issue.maximum), issue.inclusive !== false);
    case 'invalid_value':
      return { msg: `Input should be ${listOptions(issue.values)}`, type: 'literal_error' };
    case 'invalid_format':
      if (issue.format === 'url') return { msg: 'Input should be a valid URL with an http or https scheme', type: 'url_parsing' };
      if (issue.format === 'regex') {
        const pattern = 'pattern' in issue && typeof issue.pattern === 'string' ? issue.pattern : '';
        const text = patternText(pattern);
        if (text) return { msg: `String should be ${text}`, type: 'string_pattern_mismatch' };
        return { msg: `String should match pattern '${pattern.replace(/^\/|\/[a-z]*$/g, '')}'`, type: 'string_pattern_mismatch' };
      }
      return { msg: issue.message, type: 'value_error' };
    default:
      return { msg: issue.message, type: 'value_error' };
  }
}

function describeType(expected: string, where: Where): { msg: string; type: string } {
  switch (expected) {
    case 'int':
    case 'number':
      return where === 'body'
        ? { msg: 'Input should be a valid integer', type: 'int_type' }
        : { msg: 'Input should be a valid integer, unable to parse string as an integer', type: 'int_parsing' };
    case 'string':
      return { msg: 'Input should be a valid string', type: 'string_type' };
    case 'boolean':
      return { msg: 'Input should be a valid boolean', type: 'bool_type' };
    case 'object':
    case 'record':
      return { msg: 'Input should be a valid dictionary or object', type: 'dict_type' };
    case 'array':
      return { msg: 'Input should be a valid list', type: 'list_type' };
    default:
      return { msg: `Input should be a valid ${expected}`, type: `${expected}_type` };
  }
}

function describeBound(origin: string, side: 'min' | 'max', bound: number, inclusive: boolean): { msg: string; type: string } {
  if (origin === 'string') {
    return side === 'min'
      ? { msg: `String should have at least ${bound} character${bound === 1 ? '' : 's'}`, type: 'string_too_short' }
      : { msg: `String should have at most ${bound} character${bound === 1 ? '' : 's'}`, type: 'string_too_long' };
  }
  if (origin === 'array' || origin === 'set') {
    return side === 'min'
      ? { msg: `List should have at least ${bound} items`, type: 'too_short' }
      : { msg: `List should have at most ${bound} items`, type: 'too_long' };
  }
  if (side === 'min') {
    return inclusive
      ? { msg: `Input should be greater than or equal to ${bound}`, type: 'greater_than_equal' }
      : { msg: `Input should be greater than ${bound}`, type: 'greater_than' };
  }
  return inclusive
    ? { msg: `Input should be less than or equal to ${bound}`, type: 'less_than_equal' }
    : { msg: `Input should be less than ${bound}`, type: 'less_than' };
}

function listOptions(values: readonly unknown[]): string {
  const quoted = values.map((v) => (typeof v === 'string' ? `'${v}'` : String(v)));
  if (quoted.length <= 1) return quoted.join('');
  return `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`;
}
