import assert from 'node:assert/strict';
import { appendFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { parseSharedRecord, sharedRecordJson } from '../src/core/jsonl/shared-records.ts';
import { tailRecords } from '../src/core/jsonl/tail-records.ts';
import { jsonText } from '../src/server/json-text.ts';
import { tempDataDir } from './helpers/data-dir.ts';

// The newest lines of a log are parsed once and their records shared (frozen)
// by the reads that meet the same line again; answers made of them are
// joined from the texts the records keep. A read must still see exactly its
// lines, and the bytes sent must be JSON.stringify's.

test('a line met again gives the same frozen record; another line, another record', () => {
  const line = '{"ts":"2026-11-26T00:00:00Z","node":"hub","nested":{"a":[1,2]}}';
  const a = parseSharedRecord(line);
  const b = parseSharedRecord(`${line}`);
  assert.ok(a);
  assert.equal(a, b);
  assert.ok(Object.isFrozen(a) && Object.isFrozen(a.nested) && Object.isFrozen((a.nested as { a: unknown }).a));
  assert.throws(() => {
    (a as Record<string, unknown>).node = 'other';
  }, TypeError);
  assert.notEqual(parseSharedRecord(line.replace('hub', 'forge')), a);
  assert.equal(parseSharedRecord('[1,2]'), undefined);
  assert.equal(parseSharedRecord('{"torn":'), undefined);
  assert.equal(sharedRecordJson(a), JSON.stringify(a));
  assert.equal(sharedRecordJson({ ts: 'x' }), undefined, 'only shared records keep their text');
  const long = `{"pad":"${'x'.repeat(5000)}"}`;
  assert.notEqual(parseSharedRecord(long), parseSharedRecord(long), 'long lines are parsed, not kept');
});

test('shared tail reads see every change of the log: appends, rewrites, truncation', async (t) => {
  const dir = await tempDataDir(t);
  const file = path.join(dir, 'trends.jsonl');
  const read = async () => (await tailRecords(file, 3, { shared: true })).records.map((r) => r.v);
  await writeFile(file, '{"v":1}\n{"v":2}\n');
  assert.deepEqual(await read(), [2, 1]);
  await appendFile(file, '{"v":3}\n{"v":4}\n');
  assert.deepEqual(await read(), [4, 3, 2]);
  await writeFile(file, '{"v":1}\n{"v":22}\n');
  assert.deepEqual(await read(), [22, 1]);
  await writeFile(file, '');
  assert.deepEqual(await read(), []);
});

test('jsonText writes the bytes JSON.stringify writes, shared records or not', () => {
  const shared = ['{"ts":"a","n":1}', '{"ts":"b","s":"é\\u2028"}', '{"x":null,"y":[true]}'].map((l) => parseSharedRecord(l));
  const plain = { ts: 'c', n: 2 };
  const cases: unknown[] = [
    { items: shared, count: 3, limit: 10, skipped_lines: 0 },
    { items: [...shared, plain], count: 4 },
    { items: [plain, ...shared] },
    { a: undefined, items: shared, f: () => 1, z: [undefined, 1] },
    { items: shared, when: new Date(0) },
    { items: shared, keyed: { toJSON: (key: string) => `called for ${key}` } },
    { '1': 'first', items: shared, 'quo"te': 'x' },
    shared,
    [],
    { items: [] },
    'text',
    null,
    { toJSON: () => ({ items: shared }) },
  ];
  for (const value of cases) assert.equal(jsonText(value), JSON.stringify(value), JSON.stringify(value));
  fc.assert(
    fc.property(fc.dictionary(fc.string(), fc.oneof(fc.jsonValue(), fc.constant(shared), fc.constant([...shared, plain]), fc.constant(undefined))), (value) => {
      assert.equal(jsonText(value), JSON.stringify(value));
    }),
    { seed: 20_261_126, numRuns: 500 },
  );
});
