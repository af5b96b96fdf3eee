import type { z } from 'zod';

/**
 * A fast check of an operation's output (or of a request body: parseInput):
 * true only when zod would accept the value and hand back a value that
 * serialises to the same bytes (same keys, in the same order, same values),
 * so the value can be sent (or handled) as it is. False says nothing: the
 * caller then runs zod, which decides (and names the issues of a bad
 * value). zod's object parse copies every object key by key, which for a
 * page of a thousand records cost more than reading them.
 */
export type OutputCheck = (value: unknown) => boolean;

/** What zod's internals give a schema: its definition and the run that parses and checks. */
interface Internals {
  def: { type: string; checks?: unknown[]; [key: string]: unknown };
  optin?: string;
  optout?: string;
  /** An enum's (or literal's) values. */
  values?: Set<unknown>;
  run: (payload: { value: unknown; issues: unknown[] }, ctx: object) => { value: unknown; issues: unknown[] } | Promise<unknown>;
}

const internals = (schema: z.ZodType): Internals => (schema as unknown as { _zod: Internals })._zod;

/** The context zod's own safeParse passes. */
const CTX = { async: false };

/** Types whose parse hands back the very value it was given when it accepts it (checks and all). */
const LEAVES = new Set(['string', 'number', 'boolean', 'bigint', 'literal', 'enum', 'null', 'undefined', 'unknown', 'any', 'nan', 'date', 'template_literal', 'custom']);

const checks = new WeakMap<z.ZodType, OutputCheck | null>();

/**
 * The fast check of `schema`, compiled once; undefined when the schema holds
 * something it does not know (records, unions of objects, transforms,
 * defaults, refinements of objects…): zod alone then checks the output.
 */
export function outputCheck(schema: z.ZodType): OutputCheck | undefined {
  let check = checks.get(schema);
  if (check === undefined) {
    check = compile(schema) ?? null;
    checks.set(schema, check);
  }
  return check ?? undefined;
}

function compile(schema: z.ZodType): OutputCheck | undefined {
  const zod = internals(schema);
  const { def } = zod;
  const plain = !def.checks?.length;
  switch (def.type) {
    case 'optional': {
      const inner = compile(def.innerType as z.ZodType);
      return inner && plain ? (v) => v === undefined || inner(v) : undefined;
    }
    case 'nullable': {
      const inner = compile(def.innerType as z.ZodType);
      return inner && plain ? (v) => v === null || inner(v) : undefined;
    }
    case 'array': {
      const element = compile(def.element as z.ZodType);
      const bounds = lengthBounds(def.checks);
      if (!element || !bounds) return undefined;
      const [min, max] = bounds;
      return (v) => {
        if (!Array.isArray(v) || v.length < min || v.length > max) return false;
        for (let i = 0; i < v.length; i++) if (!element(v[i])) return false;
        return true;
      };
    }
    case 'object':
      return plain ? compileObject(def) : undefined;
    case 'record':
      return plain ? compileRecord(def) : undefined;
    case 'union': {
      const options = def.options as z.ZodType[];
      const leaves = options.every((o) => LEAVES.has(internals(o).def.type));
      if (!plain) return leaves ? leaf(zod) : undefined;
      // zod takes the first option that accepts. A leaf hands back the very value, so any accepting option will do; an
      // array or an object may be accepted by an earlier option that changes it (drops or reorders keys), so a union of
      // those is read only when no two options take the same kind of value (a number or a list of strings).
      if (!leaves) {
        const kinds = options.map(kindOf);
        if (kinds.some((k) => k === undefined) || new Set(kinds).size !== kinds.length) return undefined;
      }
      const each = options.map((o) => compile(o));
      if (!each.every((check) => check !== undefined)) return undefined;
      return (v) => each.some((check) => (check as OutputCheck)(v));
    }
    default:
      if (!LEAVES.has(def.type)) return undefined;
      // A string without checks or a format (z.iso.datetime(), z.email()… keep theirs on the schema) is the common case: no need to ask zod.
      if (def.type === 'string' && plain && (def as { format?: unknown }).format === undefined) return (v) => typeof v === 'string';
      // z.number() takes finite numbers only.
      if (def.type === 'number' && plain && (def as { format?: unknown }).format === undefined) return (v) => typeof v === 'number' && Number.isFinite(v);
      if (def.type === 'enum' && plain && zod.values) {
        const values = zod.values;
        return (v) => values.has(v);
      }
      if ((def.type === 'unknown' || def.type === 'any') && plain) return () => true;
      return checkedLeaf(def) ?? leaf(zod);
  }
}

/** The length of `text` in Unicode code points (a surrogate pair is one), as zod measures a string. */
function codePoints(text: string): number {
  let count = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    if ((text.charCodeAt(i) & 0xfc00) === 0xd800 && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      count--;
      i++;
    }
  }
  return count;
}

/**
 * A string or a number whose checks are all bounds (`.min`, `.max`; on a
 * string, its length in code points) or, on a string, `.regex`, checked here
 * as zod checks them (the pattern from lastIndex 0; inclusive bounds or not);
 * undefined for any other check or format: zod's run decides.
 */
function checkedLeaf(def: Internals['def']): OutputCheck | undefined {
  if ((def.type !== 'string' && def.type !== 'number') || (def as { format?: unknown }).format !== undefined) return undefined;
  const tests: ((v: never) => boolean)[] = [];
  for (const check of def.checks ?? []) {
    const c = (check as { _zod: { def: { check: string; minimum?: unknown; maximum?: unknown; format?: unknown; pattern?: unknown; value?: unknown; inclusive?: boolean } } })._zod.def;
    if (def.type === 'string' && c.check === 'min_length' && typeof c.minimum === 'number') {
      const min = c.minimum;
      // Fewer UTF-16 units than the floor never reach it, twice as many always do: only between is the count of code points needed.
      tests.push((v: string) => v.length >= min && (v.length >= min * 2 || codePoints(v) >= min));
    } else if (def.type === 'string' && c.check === 'max_length' && typeof c.maximum === 'number') {
      const max = c.maximum;
      tests.push((v: string) => v.length <= max || codePoints(v) <= max);
    } else if (def.type === 'string' && c.check === 'string_format' && c.format === 'regex' && c.pattern instanceof RegExp) {
      const pattern = c.pattern;
      tests.push((v: string) => {
        pattern.lastIndex = 0;
        return pattern.test(v);
      });
    } else if (def.type === 'number' && (c.check === 'greater_than' || c.check === 'less_than') && typeof c.value === 'number') {
      const bound = c.value;
      const inclusive = c.inclusive === true;
      if (c.check === 'greater_than') tests.push(inclusive ? (v: number) => v >= bound : (v: number) => v > bound);
      else tests.push(inclusive ? (v: number) => v <= bound : (v: number) => v < bound);
    } else return undefined;
  }
  const type = def.type;
  return (v) => {
    if (type === 'string' ? typeof v !== 'string' : typeof v !== 'number' || !Number.isFinite(v)) return false;
    for (let i = 0; i < tests.length; i++) if (!(tests[i] as (v: unknown) => boolean)(v)) return false;
    return true;
  };
}

/** zod's own run, accepted only when it hands back the value it was given. */
function leaf(zod: Internals): OutputCheck {
  return (v) => {
    const result = zod.run({ value: v, issues: [] }, CTX);
    return !(result instanceof Promise) && result.issues.length === 0 && result.value === v;
  };
}

/** The kind of JSON value every value `schema` accepts is of, when it is one: a string, a number, a boolean, null, an array or an object. */
function kindOf(schema: z.ZodType): string | undefined {
  const { type } = internals(schema).def;
  if (type === 'string' || type === 'number' || type === 'boolean' || type === 'null' || type === 'array') return type;
  if (type === 'object' || type === 'record') return 'object';
  return undefined;
}

/** The bounds an array's checks put on its length (`.min(n)`, `.max(n)`); undefined for any other check. */
function lengthBounds(checks: unknown[] | undefined): [number, number] | undefined {
  let min = 0;
  let max = Number.POSITIVE_INFINITY;
  for (const check of checks ?? []) {
    const def = (check as { _zod: { def: { check: string; minimum?: number; maximum?: number; abort?: unknown } } })._zod.def;
    if (def.check === 'min_length' && typeof def.minimum === 'number') min = Math.max(min, def.minimum);
    else if (def.check === 'max_length' && typeof def.maximum === 'number') max = Math.min(max, def.maximum);
    else return undefined;
  }
  return [min, max];
}

/**
 * A record (`z.record(key, value)`, keys of a type that lists none) is sent
 * as it is when it is a plain object whose every key passes the key schema
 * as it is and every value the value schema, with no `__proto__` key (zod
 * drops one) and no symbol keys: zod builds its copy key by key in the
 * object's own order.
 */
function compileRecord(def: Internals['def']): OutputCheck | undefined {
  const keyType = def.keyType as z.ZodType;
  if (internals(keyType).values !== undefined || def.mode !== undefined || def.partial) return undefined;
  const key = compile(keyType);
  const value = compile(def.valueType as z.ZodType);
  if (!key || !value) return undefined;
  return (v) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) return false;
    const record = v as Record<string, unknown>;
    for (const name in record) {
      if (name === '__proto__' || !Object.hasOwn(record, name) || !key(name) || !value(record[name])) return false;
    }
    return Object.getOwnPropertySymbols(record).length === 0;
  };
}

/**
 * An object is sent as it is when it is a plain object whose keys are, in
 * order, the shape's keys that it has (in the shape's order) and then, for a
 * loose object only, others; each shape key it lacks may be absent; and no
 * key is `__proto__` (zod drops one). That is the order zod builds.
 */
function compileObject(def: Internals['def']): OutputCheck | undefined {
  const shape = def.shape as Record<string, z.ZodType>;
  if (Object.getOwnPropertySymbols(shape).length) return undefined;
  const catchall = def.catchall as z.ZodType | undefined;
  const catchallType = catchall === undefined ? 'strip' : internals(catchall).def.type;
  // Keys the shape does not name: dropped (strip), refused (never), kept (unknown, any), or kept when they pass the catchall's schema.
  let extra: OutputCheck | undefined;
  if (catchall !== undefined && catchallType !== 'unknown' && catchallType !== 'any' && catchallType !== 'never') {
    const { optin, optout } = internals(catchall);
    extra = optin === undefined && optout === undefined ? compile(catchall) : undefined;
    if (!extra) return undefined;
  }
  const loose = catchallType === 'unknown' || catchallType === 'any' || extra !== undefined;
  const names = Object.keys(shape);
  const index = new Map<string, number>();
  const fields: OutputCheck[] = [];
  const required: string[] = [];
  for (const [i, name] of names.entries()) {
    const field = shape[name] as z.ZodType;
    const check = compile(field);
    if (!check || name === '__proto__') return undefined;
    index.set(name, i);
    fields.push(check);
    const { optin, optout } = internals(field);
    if (!(optin === 'optional' && optout === 'optional')) required.push(name);
  }
  const small = names.length <= 8;
  return (v) => {
    if (typeof v !== 'object' || v === null) return false;
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) return false;
    const record = v as Record<string, unknown>;
    let next = 0;
    let extras = false;
    for (const key in record) {
      // A few names are found faster by comparing (keys are interned strings) than by hashing.
      let i = -1;
      if (small) {
        for (let j = 0; j < names.length; j++) {
          if (names[j] === key) {
            i = j;
            break;
          }
        }
      } else i = index.get(key) ?? -1;
      if (i === -1) {
        if (!loose || key === '__proto__' || (extra && !extra(record[key]))) return false;
        extras = true;
        continue;
      }
      if (extras || i < next) return false;
      next = i + 1;
      if (!(fields[i] as OutputCheck)(record[key])) return false;
    }
    // Own keys only: zod's `in` would also find a key of Object.prototype (`toString`), and then decide.
    for (let r = 0; r < required.length; r++) if (!Object.hasOwn(record, required[r] as string)) return false;
    return true;
  };
}
