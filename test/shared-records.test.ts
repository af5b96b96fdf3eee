import assert from 'node:assert/strict';
import { appendFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { dataPath } from '../src/core/data-files.ts';
import { isSharedRecord, keptSharedText, parseSharedRecord, sharedRecordJson } from '../src/core/jsonl/shared-records.ts';
import { tailRecords } from '../src/core/jsonl/tail-records.ts';
import { recentRecords } from '../src/core/recent-records.ts';
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

test('an unchanged log end answers the same frozen result; a change of the same size does not', async (t) => {
  const dir = await tempDataDir(t);
  const file = path.join(dir, 'trends.jsonl');
  await writeFile(file, '{"v":1}\n{"v":2}\n{"v":3}\n');
  const first = await tailRecords(file, 2, { shared: true });
  const again = await tailRecords(file, 2, { shared: true });
  assert.equal(again, first, 'the same result');
  assert.ok(Object.isFrozen(first) && Object.isFrozen(first.records));
  assert.deepEqual((await tailRecords(file, 3, { shared: true })).records.map((r) => r.v), [3, 2, 1], 'another limit, another result');
  assert.deepEqual((await tailRecords(file, 2)).records.map((r) => r.v), [3, 2], 'an unshared read of the same');

  await writeFile(file, '{"v":1}\n{"v":2}\n{"v":4}\n');
  const changed = await tailRecords(file, 2, { shared: true });
  assert.notEqual(changed, first);
  assert.deepEqual(changed.records.map((r) => r.v), [4, 2], 'a rewrite of the same size is seen');
  await writeFile(file, '{"v":9}\n{"v":2}\n{"v":4}\n');
  assert.deepEqual((await tailRecords(file, 2, { shared: true })).records.map((r) => r.v), [4, 2], 'a change before the lines read changes nothing');
  await writeFile(file, '{"v":9} {"v":2}\n{"v":4}\n');
  const joined = await tailRecords(file, 2, { shared: true });
  assert.deepEqual([joined.records.map((r) => r.v), joined.skipped], [[4], 1], 'the newline before the oldest line read is part of what is compared');
  await writeFile(file, '{"v":9}\n{"v":2}\n{"v":5}\n');
  assert.deepEqual((await tailRecords(file, 3, { shared: true })).records.map((r) => r.v), [5, 2, 9]);
  await writeFile(file, '{"v":8}\n{"v":2}\n{"v":5}\n');
  assert.deepEqual((await tailRecords(file, 3, { shared: true })).records.map((r) => r.v), [5, 2, 8], 'a read that reached the file\'s start depends on all of it');
});

test('recentRecords answers the same frozen page while the log end is unchanged', async (t) => {
  const dir = await tempDataDir(t);
  await writeFile(dataPath(dir, 'trends'), '{"v":1}\n{"v":2}\n');
  const page = await recentRecords(dir, 'trends', 5);
  assert.equal(await recentRecords(dir, 'trends', 5), page);
  assert.ok(Object.isFrozen(page) && Object.isFrozen(page.items) && isSharedRecord(page));
  const text = JSON.stringify({ items: [{ v: 2 }, { v: 1 }], count: 2, limit: 5, skipped_lines: 0 });
  assert.equal(keptSharedText(page), undefined, 'nothing kept before it is asked for');
  assert.equal(jsonText(page), text);
  assert.equal(keptSharedText(page), text, 'the page keeps the text it was sent as');
  assert.equal(sharedRecordJson(page), text);
  await appendFile(dataPath(dir, 'trends'), '{"v":3}\n');
  const next = await recentRecords(dir, 'trends', 5);
  assert.notEqual(next, page);
  assert.deepEqual(next.items.map((r) => r.v), [3, 2, 1]);
  const filtered = await recentRecords(dir, 'trends', 5, (r) => r.v !== 2);
  assert.ok(!Object.isFrozen(filtered.items), 'a filtered page is the caller\'s own');
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

test('a record of a long line is frozen too, though it is not kept: its reader may still share it', () => {
  const line = JSON.stringify({ ts: 't', note: 'x'.repeat(5000), nested: { k: [1] } });
  const record = parseSharedRecord(line) as Record<string, any>;
  assert.ok(Object.isFrozen(record) && Object.isFrozen(record.nested) && Object.isFrozen(record.nested.k));
  assert.throws(() => {
    record.ts = 'changed';
  }, TypeError);
  assert.notEqual(parseSharedRecord(line), record, 'not kept: parsed anew');
});
