import type { z } from 'zod';
import { EstateError, validationError, type ValidationIssue } from '../errors.ts';
import type { Operation, OperationInput } from './define-operation.ts';
import { outputCheck as inputCheck } from './output-check.ts';
import { toValidationIssues } from './validation-issues.ts';

export interface RawInput {
  path?: Record<string, string>;
  /** Query strings as received (HTTP) or as typed (CLI options). */
  query?: Record<string, string | undefined>;
  /** The decoded JSON body, if the route takes one. */
  body?: unknown;
  /** Query parameters sent more than once (HTTP): each one the route takes is a 422 at its loc. */
  repeated?: readonly string[];
  /**
   * The JSON text the body was parsed from, when there was one: a text with
   * neither `__proto__` nor a `\u` escape (which could spell it) holds no
   * such key, and its body is not walked for one (see droppedProtoKeys).
   */
  bodyText?: string;
}

/** The names that occur more than once in `params`, each once. */
export function repeatedNames(params: URLSearchParams): string[] {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const name of params.keys()) (seen.has(name) ? repeated : seen).add(name);
  return [...repeated];
}

/**
 * A 422 issue for each parameter of `schema` that was sent more than once
 * (`limit=1&limit=2`): which value was meant is not for the server to guess.
 * Parameters the route does not take (`api_key`) are not checked.
 */
export function repeatedParamIssues(schema: z.ZodObject | undefined, repeated: readonly string[] | undefined): ValidationIssue[] {
  if (!schema || !repeated?.length) return [];
  return repeated
    .filter((name) => Object.hasOwn(schema.shape, name))
    .map((name) => ({ loc: ['query', name], msg: 'Expected one value, got several: send the parameter once', type: 'repeated_parameter' }));
}

type Erased = OperationInput<z.ZodObject, z.ZodObject, z.ZodObject>;

/**
 * Validates raw input against an operation's schemas, the same way for HTTP
 * and the CLI, and throws one `validation` error with every issue found.
 * Query values are strings; those meant as integers or booleans are converted
 * first, and a value that does not convert is reported as `int_parsing`.
 */
export function parseInput(op: Operation, raw: RawInput): Erased {
  const issues: ValidationIssue[] = [];
  const parse = (where: 'path' | 'query' | 'body', schema: z.ZodObject | undefined, value: unknown): Record<string, unknown> => {
    if (!schema) return {};
    const result = schema.safeParse(value, { reportInput: true });
    if (result.success) return result.data;
    issues.push(...toValidationIssues(where, result.error.issues));
    return {};
  };
  const path = parse('path', op.input.path, raw.path ?? {});
  const repeated = repeatedParamIssues(op.input.query, raw.repeated);
  const query = parse('query', op.input.query, op.input.query ? coerceQuery(op.input.query, raw.query ?? {}) : {});
  issues.push(...repeated.filter((r) => !issues.some((i) => i.loc[0] === 'query' && i.loc[1] === r.loc[1])));
  let body: Record<string, unknown> = {};
  if (op.input.body) {
    if (raw.body === undefined) {
      issues.push({ loc: ['body'], msg: 'Field required', type: 'missing' });
    } else if (raw.body === null || typeof raw.body !== 'object' || Array.isArray(raw.body)) {
      issues.push({ loc: ['body'], msg: 'Input should be a valid dictionary or object', type: 'dict_type' });
    } else if (inputCheck(op.input.body)?.(raw.body)) {
      // zod would take the body as it is (a hub's samples: zod's copy of each cost more than storing it); zod reads the rest, and names their issues.
      body = raw.body as Record<string, unknown>;
    } else {
      body = parse('body', op.input.body, raw.body);
      if (!issues.length && mayHoldProtoKey(raw.bodyText)) issues.push(...droppedProtoKeys(raw.body, body, ['body']));
    }
  }
  if (issues.length) throw validationError(issues);
  return { path, query, body };
}

/** Whether a body parsed from `text` may hold a key `__proto__` (unknown text: it may). */
function mayHoldProtoKey(text: string | undefined): boolean {
  return text === undefined || text.includes('__proto__') || text.includes('\\u');
}

/**
 * A JSON object may carry an own key `__proto__` (JSON.parse keeps it as
 * data), but a zod record or object drops it from what it returns. Input is
 * never dropped silently: each `__proto__` of the body that is absent from
 * the parsed value at the same place is a 422 issue at its loc. One kept
 * (inside a free-form value) is stored as data.
 */
function droppedProtoKeys(raw: unknown, parsed: unknown, loc: (string | number)[]): ValidationIssue[] {
  if (raw === null || typeof raw !== 'object' || parsed === null || typeof parsed !== 'object' || raw === parsed) return [];
  const out: ValidationIssue[] = [];
  for (const [key, value] of Object.entries(raw)) {
    if (key === '__proto__' && !Object.hasOwn(parsed, key)) {
      out.push({ loc: [...loc, key], msg: "Value error, a key named '__proto__' cannot be stored", type: 'value_error' });
      continue;
    }
    const k = Array.isArray(raw) ? Number(key) : key;
    if (Object.hasOwn(parsed, key)) out.push(...droppedProtoKeys(value, (parsed as Record<string, unknown>)[key], [...loc, k]));
  }
  return out;
}

const INTEGER = /^[+-]?\d{1,16}$/;

function coerceQuery(schema: z.ZodObject, raw: Record<string, string | undefined>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(schema.shape)) {
    const value = raw[key];
    if (value === undefined) continue;
    const kind = baseType(field as z.ZodType);
    if (kind === 'number' && INTEGER.test(value.trim())) out[key] = Number(value.trim());
    else if (kind === 'boolean' && /^(true|false|1|0)$/i.test(value)) out[key] = /^(true|1)$/i.test(value);
    else out[key] = value;
  }
  return out;
}

/** The zod type name under default/optional/nullable wrappers. */
function baseType(schema: z.ZodType): string {
  let def = schema._zod.def as { type: string; innerType?: z.ZodType };
  while (def.innerType && (def.type === 'default' || def.type === 'optional' || def.type === 'nullable' || def.type === 'prefault')) {
    def = def.innerType._zod.def as typeof def;
  }
  return def.type;
}

/** Thrown when an operation's own output fails its schema: our bug, never the caller's. */
export function outputError(op: Operation, issues: readonly z.core.$ZodIssue[]): EstateError {
  const summary = issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    .join('; ');
  return new EstateError('internal', `output of ${op.id} does not match its schema: ${summary}`);
}
