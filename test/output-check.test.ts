import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { z } from 'zod';
import { operations } from '../src/api/operations/index.ts';
import { trendsList } from '../src/api/operations/trends.ts';
import { outputCheck } from '../src/api/output-check.ts';
import { storedTime } from '../src/api/schemas.ts';
import { DEMO_FIXTURE } from './helpers/data-dir.ts';

// The compiled output check lets an answer go out without zod's copy only
// when zod would accept it and hand back the same bytes: whenever it says
// yes, zod says yes to a value that serialises the same (same keys in the
// same order); whenever zod says no, it says no. It must also say yes to
// the answers estate sends most (a page of trend points), or it is useless.

const schemas: Record<string, z.ZodType> = {
  trends: trendsList.output,
  strict: z.strictObject({ a: z.string(), b: z.int().min(0).optional() }),
  strip: z.object({ a: z.string(), n: z.number().nullable() }),
  loose: z.looseObject({ ts: z.string().optional(), id: z.string().min(2) }),
  nested: z.object({ items: z.array(z.object({ k: z.enum(['x', 'y']), v: z.union([z.string(), z.number()]) })), total: z.int() }),
  trimmed: z.object({ name: z.string().trim() }),
  literal: z.object({ status: z.literal('ok') }),
  formats: z.object({ at: z.iso.datetime(), mail: z.email(), link: z.url() }),
  stored: z.object({ at: storedTime('When') }),
  checkedUnion: z.object({ v: z.union([z.iso.datetime(), z.number()]) }),
};

/** Whether the compiled check says yes, and if so that zod agrees and gives the same bytes; whether zod accepts. */
function compare(schema: z.ZodType, value: unknown): { fast: boolean; zod: boolean } {
  const check = outputCheck(schema);
  assert.ok(check, 'the schema compiles');
  const fast = check(value);
  const parsed = schema.safeParse(value);
  if (fast) {
    assert.ok(parsed.success, `zod refuses what the check let through: ${JSON.stringify(value)}`);
    assert.equal(JSON.stringify(value), JSON.stringify(parsed.data), 'the same bytes as zod\'s output');
  }
  return { fast, zod: parsed.success };
}

test('the compiled check agrees with zod on a table of answers', () => {
  const proto = JSON.parse('{"a":"x","__proto__":{"b":1}}');
  const cases: [string, unknown, boolean][] = [
    ['trends', { items: [{ ts: 't', cpu: 1 }, { node: 'n' }], count: 2, limit: 10, skipped_lines: 0 }, true],
    ['trends', { items: [{ cpu: 1, ts: 't' }], count: 1, limit: 10, skipped_lines: 0 }, false], // zod moves ts first
    ['trends', { items: [{ ts: 5 }], count: 1, limit: 10, skipped_lines: 0 }, true], // a ts is returned as stored, whatever it is
    ['trends', { items: [5], count: 1, limit: 10, skipped_lines: 0 }, false],
    ['trends', { items: [], count: -1, limit: 10, skipped_lines: 0 }, false],
    ['trends', { items: [], count: 1.5, limit: 10, skipped_lines: 0 }, false],
    ['trends', { items: [], limit: 10, skipped_lines: 0, count: 0 }, false], // zod reorders the keys
    ['trends', { items: [], count: 0, limit: 10 }, false],
    ['strict', { a: 'x' }, true],
    ['strict', { a: 'x', b: 3 }, true],
    ['strict', { a: 'x', c: 1 }, false],
    ['strict', { a: 'x', b: undefined }, true],
    ['strip', { a: 'x', n: null }, true],
    ['strip', { a: 'x', n: 1, extra: true }, false], // zod drops extra
    ['strip', { a: 'x' }, false],
    ['strip', { n: 1, toString: 'x' }, false],
    ['loose', { id: 'ab', more: [1, { deep: true }] }, true],
    ['loose', proto, false],
    ['loose', { ts: 't', id: 'a' }, false],
    ['nested', { items: [{ k: 'x', v: 1 }, { k: 'y', v: 's' }], total: 2 }, true],
    ['nested', { items: [{ k: 'z', v: 1 }], total: 1 }, false],
    ['trimmed', { name: 'a' }, true],
    ['trimmed', { name: ' a ' }, false], // zod trims: not the same value
    ['literal', { status: 'ok' }, true],
    ['literal', { status: 'ko' }, false],
    ['literal', new Map(), false],
    ['literal', [], false],
    // A string format is checked by zod's own run, not skipped as a plain string.
    ['formats', { at: '2026-11-26T10:00:00Z', mail: 'a@example.org', link: 'https://example.org/' }, true],
    ['formats', { at: 'not a date', mail: 'a@example.org', link: 'https://example.org/' }, false],
    ['formats', { at: '2026-11-26T10:00:00Z', mail: 'nobody', link: 'https://example.org/' }, false],
    ['formats', { at: '2026-11-26T10:00:00Z', mail: 'a@example.org', link: 'no url' }, false],
    // A passed-through time: a date-time or any other text, never anything else.
    ['stored', { at: '2026-11-26T10:00:00Z' }, true],
    ['stored', { at: 'yesterday' }, true],
    ['stored', { at: 5 }, false],
    // Each option of a union keeps its own checks.
    ['checkedUnion', { v: '2026-11-26T10:00:00Z' }, true],
    ['checkedUnion', { v: 3 }, true],
    ['checkedUnion', { v: 'not a date' }, false],
  ];
  for (const [name, value, expected] of cases) {
    const { fast, zod } = compare(schemas[name] as z.ZodType, value);
    assert.equal(fast, expected, `${name}: ${JSON.stringify(value)}`);
    if (!zod) assert.equal(fast, false);
  }
});

test('the compiled check agrees with zod on random values', () => {
  const json = fc.jsonValue({ maxDepth: 3 });
  const record = fc.dictionary(fc.oneof(fc.constantFrom('ts', 'id', 'a', 'b', 'n', 'k', 'v', '__proto__', '1'), fc.string()), json, { maxKeys: 5 });
  const values = fc.oneof(
    json,
    record,
    fc.record({ items: fc.array(record, { maxLength: 4 }), count: fc.integer({ min: -1, max: 3 }), limit: fc.integer({ min: 0, max: 3 }), skipped_lines: fc.integer({ min: 0, max: 2 }) }),
    fc.record({ items: fc.array(fc.record({ k: fc.constantFrom('x', 'y', 'z'), v: fc.oneof(fc.string(), fc.double(), fc.boolean()) }), { maxLength: 3 }), total: fc.oneof(fc.integer(), fc.double()) }),
  );
  let agreed = 0;
  fc.assert(
    fc.property(values, (value) => {
      for (const schema of Object.values(schemas)) if (compare(schema, value).fast) agreed++;
    }),
    { seed: 20_261_126, numRuns: 3000 },
  );
  assert.ok(agreed > 100, `the check let through only ${agreed} values`);
});

test('a page of the demo trend points passes the compiled check as read', async () => {
  const text = await readFile(path.join(DEMO_FIXTURE, 'trends.jsonl'), 'utf8');
  const items = text.trim().split('\n').reverse().map((line) => JSON.parse(line) as Record<string, unknown>);
  const page = { items, count: items.length, limit: 1000, skipped_lines: 0 };
  assert.deepEqual(compare(trendsList.output, page), { fast: true, zod: true });
});

test('the operations whose output the check cannot read are few and known', () => {
  const unread = operations.filter((op) => outputCheck(op.output) === undefined).map((op) => op.id);
  assert.deepEqual(unread.sort(), ['disk.range', 'pulse.list', 'training.get', 'training.list', 'training.start', 'trends.range']);
});
