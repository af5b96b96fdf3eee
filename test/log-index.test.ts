import assert from 'node:assert/strict';
import { rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { hashString } from '../src/core/jsonl/hash-string.ts';
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

test('hashString: unsigned 32-bit, deterministic, spread over the low and the high bits', () => {
  const keys = Array.from({ length: 100_000 }, (_, i) => JSON.stringify([`board-${i % 20}`, `T-${i}`]));
  const low = new Uint32Array(1024);
  const high = new Uint32Array(16);
  const seen = new Set<number>();
  for (const key of keys) {
    const h = hashString(key);
    assert.ok(Number.isInteger(h) && h >= 0 && h < 2 ** 32, `${h}`);
    assert.equal(hashString(key), h);
    low[h & 1023]! += 1;
    high[h >>> 28]! += 1;
    seen.add(h);
  }
  // 100 000 keys: a handful of full 32-bit collisions at most, and even buckets (the index's parts use the top 4 bits).
  assert.ok(keys.length - seen.size <= 5, `${keys.length - seen.size} collisions`);
  assert.ok(Math.max(...low) < 2 * (keys.length / 1024), `fullest bucket ${Math.max(...low)}`);
  assert.ok(Math.max(...high) < 1.1 * (keys.length / 16) && Math.min(...high) > 0.9 * (keys.length / 16), `parts ${high.join(' ')}`);
  assert.notEqual(hashString('a'), hashString('b'));
  assert.notEqual(hashString('ab'), hashString('ba'));
  assert.notEqual(hashString('é🙂'), hashString('e🙂'));
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
    assert.equal(index.mayHold({ k: `key-${i}`, id: `id-${i}` }), false);
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

test('forced collisions: every candidate comes back, in file order', () => {
  const index = filled(3000, { hash: () => 7 });
  const all = Array.from({ length: 3000 }, (_, i) => i);
  assert.deepEqual(index.keyCandidates('key-5'), all);
  assert.deepEqual(index.keyCandidates('anything'), all);
  assert.deepEqual(list(index.positions('id', 'id-9')), all);
  // Hashes that collide by length: every key of that length is a candidate; the id's hash narrows what a record may be.
  const partial = filled(3000, { hash: (s) => s.length });
  assert.deepEqual(partial.keyCandidates('key-5'), Array.from({ length: 10 }, (_, i) => i));
  assert.equal(list(partial.positions('id', 'id-42')).length, 90, 'every 5-character id');
  assert.equal(partial.mayHold({ k: 'key-5', id: 'id-5' }), true);
  assert.equal(partial.mayHold({ k: 'key-5', id: 'id-50' }), false, 'no 5-character key sits with a 5-character id');
  assert.equal(partial.mayHold({ k: 'key-50', id: 'id-50' }), true);
});

test('hashed lookups stay exact across the sorted runs they merge into, ties in file order', () => {
  // Every hash in one of the 16 parts, and only 4,096 distinct values: long runs of equal hashes, merged many times.
  const hash = (s: string) => hashString(s) & 0x0fff0000;
  const count = 150_000;
  const index = filled(count, { hash });
  const byHash = new Map<number, number[]>();
  for (let i = 0; i < count; i++) {
    const h = hash(`key-${i}`);
    byHash.set(h, [...(byHash.get(h) ?? []), i]);
  }
  for (const i of [0, 1, 65_535, 65_536, 100_000, 131_071, 131_072, 149_999]) {
    assert.deepEqual(index.keyCandidates(`key-${i}`), byHash.get(hash(`key-${i}`)), `key-${i}`);
  }
  // More appends after lookups sorted the tail: the run and the new tail answer together.
  let offset = count * 100;
  for (let i = count; i < count + 9000; i++) {
    index.addLine(offset, 10, { k: `key-${i}`, id: `id-${i}`, group: 'g' });
    offset += 11;
    const h = hash(`key-${i}`);
    byHash.set(h, [...(byHash.get(h) ?? []), i]);
  }
  for (const i of [7, 149_999, count, count + 4500, count + 8999]) {
    assert.deepEqual(index.keyCandidates(`key-${i}`), byHash.get(hash(`key-${i}`)), `key-${i}`);
    assert.ok(list(index.positions('id', `id-${i}`)).includes(i));
  }
  // Hashes spread over 28 bits, all in one part: every key is found after the merges, with the few keys sharing its hash.
  const narrow = (s: string) => hashString(s) & 0x0fffffff;
  const spread = filled(count, { hash: narrow });
  const sharing = new Map<number, number[]>();
  for (let i = 0; i < count; i++) sharing.set(narrow(`key-${i}`), [...(sharing.get(narrow(`key-${i}`)) ?? []), i]);
  for (let i = 0; i < count; i += 7) assert.deepEqual(spread.keyCandidates(`key-${i}`), sharing.get(narrow(`key-${i}`)), `key-${i}`);
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
  return new RecordLog({ file, ...OPTIONS, hash: () => 7 });
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
