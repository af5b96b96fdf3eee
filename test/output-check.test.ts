import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { z } from 'zod';
import { ingestCreate } from '../src/api/operations/ingest.ts';
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
  bounded: z.object({ list: z.array(z.string().max(3)).min(1).max(2) }),
  record: z.object({ checks: z.record(z.string().min(1).max(8), z.strictObject({ status: z.enum(['ok', 'bad']), value: z.union([z.number(), z.array(z.string()).max(2)]).optional() })) }),
  figures: z.object({ ts: z.string(), n: z.number().min(0).optional() }).catchall(z.number()),
  ingest: ingestCreate.input.body as z.ZodType,
  leafChecks: z.object({ s: z.string().min(2).max(3).regex(/^[a-z\u{1F600}]+$/u), g: z.string().regex(/a/g), n: z.number().min(0).lt(10), i: z.int().max(3) }),
};

/** A sample as a collector sends it, with some parts given. */
function sample(parts: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    trend: { ts: 't', node: 'n', cpu_pct: 5, load1: 0.5, mem_scope: 'host', future_figure: 3 },
    disks: [{ ts: 't', node: 'n', mount: '/', fs_type: 'ext4', total_bytes: 10, used_bytes: 4, free_bytes: 5 }],
    pulse: { ts: 't', node: 'n', status: 'healthy', checks: { memory: { status: 'healthy', value: 37.5 }, collector: { status: 'degraded', value: ['cpu'], message: 'm' } } },
    ...parts,
  };
}

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
    // Arrays with bounds on their length, records, figures kept by a catchall, unions of a number and a list.
    ['bounded', { list: ['a'] }, true],
    ['bounded', { list: [] }, false],
    ['bounded', { list: ['a', 'b', 'c'] }, false],
    ['bounded', { list: ['abcd'] }, false],
    ['record', { checks: { memory: { status: 'ok', value: 3 }, 'disk:/': { status: 'bad', value: ['x'] }, load: { status: 'ok' } } }, true],
    ['record', { checks: {} }, true],
    ['record', { checks: { '': { status: 'ok' } } }, false],
    ['record', { checks: { 'far too long': { status: 'ok' } } }, false],
    ['record', { checks: { memory: { status: 'ok', extra: 1 } } }, false],
    ['record', { checks: { memory: { status: 'ok', value: 'x' } } }, false],
    ['record', { checks: { memory: { status: 'ok', value: ['a', 'b', 'c'] } } }, false],
    ['record', { checks: JSON.parse('{"__proto__":{"status":"ok"}}') }, false],
    ['record', { checks: [] }, false],
    ['record', { checks: { 1: { status: 'ok' }, b: { status: 'ok' } } }, true],
    ['figures', { ts: 't', n: 1, more: 2.5 }, true],
    ['figures', { ts: 't', more: 2.5, n: 1 }, false], // zod moves n before the extras
    ['figures', { ts: 't', more: 'x' }, false],
    ['figures', { ts: 't', n: -1 }, false],
    // Bounds and patterns of strings and numbers, checked as zod does: a length in code points, a global pattern from its start.
    ['leafChecks', { s: 'ab', g: 'a', n: 0, i: 3 }, true],
    ['leafChecks', { s: '\u{1F600}', g: 'a', n: 9.5, i: 3 }, false], // two UTF-16 units, one code point
    ['leafChecks', { s: '\u{1F600}\u{1F600}\u{1F600}', g: 'a', n: 9.5, i: 3 }, true], // six units, three code points
    ['leafChecks', { s: 'a\u{1F600}', g: 'a', n: 9.5, i: 3 }, true],
    ['leafChecks', { s: 'a', g: 'a', n: 0, i: 3 }, false],
    ['leafChecks', { s: 'abcd', g: 'a', n: 0, i: 3 }, false],
    ['leafChecks', { s: 'aB', g: 'a', n: 0, i: 3 }, false],
    ['leafChecks', { s: 'ab', g: 'b', n: 0, i: 3 }, false],
    ['leafChecks', { s: 'ab', g: 'a', n: -0.1, i: 3 }, false],
    ['leafChecks', { s: 'ab', g: 'a', n: 10, i: 3 }, false],
    ['leafChecks', { s: 'ab', g: 'a', n: 0, i: 2.5 }, false],
    ['leafChecks', { s: 'ab', g: 'a', n: 0, i: 4 }, false],
    ['ingest', { samples: [sample()] }, true],
    ['ingest', { samples: [] }, false],
    ['ingest', { samples: [sample({ trend: { ts: 't', node: 'n', cpu_pct: 'high' } })] }, false],
    ['ingest', { samples: [sample({ trend: { node: 'n', ts: 't' } })] }, false], // zod puts ts first
    ['ingest', { samples: [sample({ pulse: { ts: 't', node: 'n', status: 'fine', checks: {} } })] }, false],
    ['ingest', { samples: [sample({ disks: [{ ts: 't', node: 'n', mount: '/', fs_type: 'ext4', total_bytes: 1, used_bytes: -1, free_bytes: 0 }] })] }, false],
    ['ingest', { samples: [sample({ trend: { ts: 't', node: 'n\u001b[31m' } })] }, false],
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

test('the compiled check agrees with zod on samples sent to a hub, changed at random', () => {
  const schema = ingestCreate.input.body as z.ZodType;
  const json = fc.jsonValue({ maxDepth: 2 });
  // A path into a sample, and what to do there: set a value, remove the key, or move the key to the end.
  const change = fc.record({
    part: fc.constantFrom('trend', 'disks', 'pulse', 'checks', 'check'),
    key: fc.constantFrom('ts', 'node', 'cpu_pct', 'mem_scope', 'mount', 'fs_type', 'used_bytes', 'status', 'checks', 'value', 'message', 'memory', 'extra', '__proto__'),
    op: fc.constantFrom('set', 'delete', 'last'),
    value: fc.oneof(json, fc.constantFrom('cgroup', 'degraded', '', 'x'.repeat(201), -1, 1e308, ['a'], { status: 'healthy' })),
  });
  let agreed = 0;
  let refused = 0;
  fc.assert(
    fc.property(fc.array(change, { maxLength: 3 }), (changes) => {
      const body = { samples: [sample()] };
      const s = body.samples[0] as Record<string, Record<string, unknown>>;
      for (const { part, key, op, value } of changes) {
        const pulse = s.pulse as Record<string, Record<string, Record<string, unknown>>>;
        const target = part === 'disks' ? (s.disks as unknown as Record<string, unknown>[])[0] : part === 'checks' ? pulse.checks : part === 'check' ? pulse.checks?.memory : s[part];
        if (!target || typeof target !== 'object') continue;
        if (op === 'delete') delete target[key];
        else if (op === 'last') {
          if (!Object.hasOwn(target, key)) continue;
          const kept = target[key];
          delete target[key];
          target[key] = kept;
        } else if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, configurable: true, writable: true });
        else target[key] = value;
      }
      const { fast, zod } = compare(schema, body);
      if (fast) agreed++;
      if (!zod) refused++;
    }),
    { seed: 20_261_206, numRuns: 3000 },
  );
  assert.ok(agreed > 300 && refused > 300, `let through ${agreed}, refused by zod ${refused}`);
});

test('bounded strings and numbers agree with zod on random values, surrogates and all', () => {
  const schema = z.object({ s: z.string().min(2).max(4).regex(/^[^\x00-\x1f]*$/), n: z.number().min(-1).lt(1) });
  const text = fc.oneof(fc.string({ unit: 'binary', maxLength: 9 }), fc.string({ unit: 'grapheme', maxLength: 5 }), fc.constantFrom('\ud83d', '\ude00a', 'a\ud83d\ude00', '\ud83d\ude00\ud83d\ude00'));
  let agreed = 0;
  fc.assert(
    fc.property(text, fc.oneof(fc.double(), fc.constantFrom(-1, 1, 0.999)), (s, n) => {
      const { fast, zod } = compare(schema, { s, n });
      assert.equal(fast, zod, JSON.stringify({ s, n }));
      if (fast) agreed++;
    }),
    { seed: 20_261_207, numRuns: 3000 },
  );
  assert.ok(agreed > 100, `let through ${agreed}`);
});

test('a union of objects is left to zod: an earlier option may take a value by changing it', () => {
  assert.equal(outputCheck(z.union([z.object({ a: z.string() }), z.looseObject({ b: z.string() })])), undefined);
  assert.equal(outputCheck(z.union([z.array(z.string()), z.array(z.number())])), undefined);
  assert.ok(outputCheck(z.union([z.number(), z.array(z.string())])));
});

test('a page of the demo trend points passes the compiled check as read', async () => {
  const text = await readFile(path.join(DEMO_FIXTURE, 'trends.jsonl'), 'utf8');
  const items = text.trim().split('\n').reverse().map((line) => JSON.parse(line) as Record<string, unknown>);
  const page = { items, count: items.length, limit: 1000, skipped_lines: 0 };
  assert.deepEqual(compare(trendsList.output, page), { fast: true, zod: true });
});

test('the operations whose output the check cannot read are none', () => {
  const unread = operations.filter((op) => outputCheck(op.output) === undefined).map((op) => op.id);
  assert.deepEqual(unread.sort(), []);
});
