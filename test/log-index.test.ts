import assert from 'node:assert/strict';
import { rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { checkHash, hashString } from '../src/core/jsonl/hash-string.ts';
import { LogIndex, type LogIndexOptions, type Positions } from '../src/core/jsonl/log-index.ts';
import type { JsonRecord } from '../src/core/jsonl/parse-record.ts';
import { RecordLog } from '../src/core/record-log.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { appendRequest } from './helpers/records.ts';

// The in-memory index of a JSONL log keeps keys and unique facet values as
// 32-bit hashes: lookups answer candidates, which the record log checks
// against the records it reads back. These tests force collisions to show
// that the answers stay exact.

const list = (p: Positions): number[] => Array.from({ length: p.length }, (_, i) => p.at(i) as number);

const OPTIONS: LogIndexOptions = {
  accept: (r) => typeof r.k === 'string',
  key: (r) => r.k as string,
  facets: { group: (r) => r.group as string | undefined },
  uniqueFacets: { id: (r) => r.id as string | undefined },
};

function filled(count: number, options: Partial<LogIndexOptions> = {}): LogIndex {
  const index = new LogIndex({ ...OPTIONS, ...options });
  let offset = 0;
  for (let i = 0; i < count; i++) {
    const record = { k: `key-${i}`, id: `id-${i}`, group: `g${i % 7}` };
    const length = JSON.stringify(record).length;
    index.addLine(offset, length, record);
    offset += length + 1;
  }
  return index;
}

test('hashString and checkHash: unsigned 32-bit, deterministic, spread over the low bits, independent', () => {
  const keys = Array.from({ length: 100_000 }, (_, i) => JSON.stringify([`board-${i % 20}`, `T-${i}`]));
  for (const hash of [hashString, checkHash]) {
    const buckets = new Uint32Array(1024);
    const seen = new Set<number>();
    for (const key of keys) {
      const h = hash(key);
      assert.ok(Number.isInteger(h) && h >= 0 && h < 2 ** 32, `${h}`);
      assert.equal(hash(key), h);
      buckets[h & 1023]! += 1;
      seen.add(h);
    }
    // 100 000 keys: a handful of full 32-bit collisions at most, and even buckets.
    assert.ok(keys.length - seen.size <= 5, `${keys.length - seen.size} collisions`);
    assert.ok(Math.max(...buckets) < 2 * (keys.length / 1024), `fullest bucket ${Math.max(...buckets)}`);
  }
  assert.notEqual(hashString('a'), hashString('b'));
  assert.notEqual(hashString('ab'), hashString('ba'));
  assert.notEqual(hashString('é🙂'), hashString('e🙂'));
  assert.notEqual(hashString('x'), checkHash('x'));
});

test('lookups by key, unique facet and facet return the right positions for thousands of records', () => {
  const count = 20_000;
  const index = filled(count);
  assert.equal(index.size, count);
  for (let i = 0; i < count; i++) {
    assert.deepEqual(index.keyCandidates(`key-${i}`), [i]);
    assert.deepEqual(list(index.positions('id', `id-${i}`)), [i]);
  }
  for (let i = count; i < count + 2000; i++) {
    assert.equal(index.mayHaveKey(`key-${i}`), false);
    assert.deepEqual(list(index.positions('id', `id-${i}`)), []);
  }
  const g3 = list(index.positions('group', 'g3'));
  assert.equal(g3.length, Math.ceil((count - 3) / 7));
  assert.ok(g3.every((p, i) => p === 3 + 7 * i));
  assert.deepEqual(list(index.positions('group', 'nope')), []);
  assert.equal(index.isHashed('id'), true);
  assert.equal(index.isHashed('group'), false);
  assert.throws(() => index.positions('nope', 'x'), /no facet nope/);
  const first = JSON.stringify({ k: 'key-0', id: 'id-0', group: 'g0' }).length;
  assert.deepEqual(index.span(1), { offset: first + 1, length: JSON.stringify({ k: 'key-1', id: 'id-1', group: 'g1' }).length });
});

test('forced collisions: every candidate comes back, in file order, through table growth', () => {
  const index = filled(3000, { hash: () => 7, checkHash: () => 1 });
  const all = Array.from({ length: 3000 }, (_, i) => i);
  assert.deepEqual(index.keyCandidates('key-5'), all);
  assert.deepEqual(index.keyCandidates('anything'), all);
  assert.deepEqual(list(index.positions('id', 'id-9')), all);
  // Colliding in the table's hash only: the check hash sorts keys out.
  const partial = filled(3000, { hash: (s) => s.length });
  for (const i of [0, 9, 10, 99, 100, 999, 1000, 2999]) assert.deepEqual(partial.keyCandidates(`key-${i}`), [i]);
  assert.equal(list(partial.positions('id', 'id-42')).length, 90, 'every 5-character id');
});

test('records without a key or a unique value, and lines that are not records', () => {
  const index = new LogIndex(OPTIONS);
  index.addLine(0, 5, undefined);
  index.addLine(6, 9, { k: 'a' });
  index.addLine(16, 9, { other: 1 });
  index.addLine(26, 20, { k: 'b', id: 'x', group: 'g' });
  index.addLine(47, 20, { k: 'c', id: 42 as unknown as string });
  assert.equal(index.size, 3);
  assert.deepEqual(index.keyCandidates('a'), [0]);
  assert.deepEqual(list(index.positions('id', 'x')), [1]);
  assert.deepEqual(list(index.positions('id', '42')), []);
  assert.equal(index.skippedFrom(0), 2);
  assert.equal(index.skippedFrom(7), 1);
  assert.equal(index.skippedFrom(17), 0);
});

// ------------------------------------------------------------ through the record log

function collidingLog(file: string): RecordLog {
  return new RecordLog({ file, ...OPTIONS, hash: () => 7, checkHash: () => 1 });
}

const put = appendRequest;

test('a record log whose keys all collide: created, replayed and conflict stay exact', async (t) => {
  const file = path.join(await tempDataDir(t), 'a.jsonl');
  const log = collidingLog(file);
  const a = await log.append(put('a', { v: 1 }));
  const b = await log.append(put('b', { v: 2 }));
  assert.equal(a.outcome, 'created');
  assert.equal(b.outcome, 'created', 'b shares a hash with a but is another key');
  assert.deepEqual(await log.append(put('a', { v: 1 })), { outcome: 'replayed', record: a.record });
  assert.deepEqual(await log.append(put('b', { v: 2 })), { outcome: 'replayed', record: b.record });
  assert.deepEqual(await log.append(put('a', { v: 9 })), { outcome: 'conflict', record: a.record });
  assert.deepEqual(await log.append(put('b', { v: 9 })), { outcome: 'conflict', record: b.record });
  assert.equal((await log.append(put('c', { v: 3 }))).outcome, 'created');
  // A batch of colliding keys, new and old, at once.
  const results = await Promise.all(Array.from({ length: 60 }, (_, i) => log.append(put(`k${i % 20}`, { v: i % 20 }))));
  assert.equal(results.filter((r) => r.outcome === 'created').length, 20);
  assert.equal(results.filter((r) => r.outcome === 'replayed').length, 40);
  for (const r of results) assert.equal(r.record.v, Number((r.record.k as string).slice(1)));
  // A second index over the file (another process) decides the same.
  const other = collidingLog(file);
  assert.deepEqual(await other.append(put('b', { v: 2 })), { outcome: 'replayed', record: b.record });
  assert.equal((await other.append(put('k7', { v: 8 }))).outcome, 'conflict');
  assert.equal((await other.append(put('d'))).outcome, 'created');
});

test('a record log whose ids all collide: find, since and newest by id stay exact', async (t) => {
  const file = path.join(await tempDataDir(t), 'a.jsonl');
  await writeFile(file, ['a', 'b', 'c', 'd'].map((k, i) => JSON.stringify({ k, id: `id-${k}`, group: i % 2 ? 'odd' : 'even' })).join('\n') + '\n');
  const log = collidingLog(file);
  for (const k of ['a', 'b', 'c', 'd']) assert.equal((await log.find('id', `id-${k}`))?.k, k);
  assert.equal(await log.find('id', 'id-z'), undefined);
  assert.deepEqual((await log.since({ facet: 'id', value: 'id-b' }, 10))?.map((r) => r.k), ['c', 'd']);
  assert.deepEqual((await log.since({ facet: 'id', value: 'id-a' }, 10, { facet: 'group', value: 'even' }))?.map((r) => r.k), ['c']);
  assert.equal(await log.since({ facet: 'id', value: 'id-z' }, 10), undefined);
  assert.deepEqual((await log.newest(10, { facet: 'id', value: 'id-c' })).records.map((r) => r.k), ['c']);
  assert.deepEqual((await log.since('start', 10, { facet: 'id', value: 'id-d' }))?.map((r) => r.k), ['d']);
  assert.deepEqual((await log.since({ facet: 'id', value: 'id-d' }, 10, { facet: 'id', value: 'id-d' }))?.map((r) => r.k), []);
});

test('after the log is replaced, subscribers hear only of records whose keys the old index did not know', async (t) => {
  const file = path.join(await tempDataDir(t), 'a.jsonl');
  await writeFile(file, '{"k":"a","id":"1"}\n{"k":"b","id":"2"}\n');
  const log = new RecordLog({ file, ...OPTIONS });
  const heard: string[] = [];
  log.subscribe((records) => heard.push(...records.map((r) => r.k as string)));
  await log.refresh();
  await writeFile(`${file}.new`, '{"k":"b","id":"2"}\n{"k":"c","id":"3"}\n{"k":"a","id":"1"}\n{"k":"d","id":"4"}\n');
  await rename(`${file}.new`, file);
  await log.refresh();
  assert.deepEqual(heard, ['c', 'd']);
});
