import assert from 'node:assert/strict';
import { appendFile, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { appendRecords } from '../src/core/jsonl/append-record.ts';
import type { JsonRecord } from '../src/core/jsonl/parse-record.ts';
import { RecordLog } from '../src/core/record-log.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { appendRequest } from './helpers/records.ts';

// The durable, indexed log under the work and publishing feeds, tested on its
// own: appends, idempotency, and a file changed behind the index's back.

function testLog(file: string): RecordLog {
  return new RecordLog({
    file,
    accept: (r) => typeof r.k === 'string',
    key: (r) => r.k as string,
    facets: { group: (r) => r.group as string | undefined, id: (r) => r.id as string | undefined },
  });
}

const put = appendRequest;

async function lines(file: string): Promise<string[]> {
  return (await readFile(file, 'utf8')).split('\n');
}

test('append: created, then replayed, then conflict; one line written', async (t) => {
  const file = path.join(await tempDataDir(t), 'log', 'a.jsonl');
  const log = testLog(file);
  const created = await log.append(put('a', { v: 1 }));
  assert.equal(created.outcome, 'created');
  const replayed = await log.append(put('a', { v: 1 }));
  assert.deepEqual(replayed, { outcome: 'replayed', record: created.record });
  const conflict = await log.append(put('a', { v: 2 }));
  assert.deepEqual(conflict, { outcome: 'conflict', record: created.record });
  assert.deepEqual(await lines(file), [JSON.stringify(created.record), '']);
});

test('concurrent appends of the same keys store each key once, in one batch or many', async (t) => {
  const file = path.join(await tempDataDir(t), 'a.jsonl');
  const log = testLog(file);
  const requests = Array.from({ length: 300 }, (_, i) => put(`k${i % 30}`, { v: i % 30 }));
  const results = await Promise.all(requests.map((r) => log.append(r)));
  assert.equal(results.filter((r) => r.outcome === 'created').length, 30);
  assert.equal(results.filter((r) => r.outcome === 'replayed').length, 270);
  const stored = (await lines(file)).filter(Boolean).map((l) => JSON.parse(l) as JsonRecord);
  assert.equal(stored.length, 30);
  assert.equal(new Set(stored.map((r) => r.k)).size, 30);
  // Every result names the record actually stored for its key.
  const byKey = new Map(stored.map((r) => [r.k, r]));
  for (const r of results) assert.deepEqual(r.record, byKey.get(r.record.k));
});

test('two indexes over one file (two processes) never store a key twice', async (t) => {
  const file = path.join(await tempDataDir(t), 'a.jsonl');
  const [a, b] = [testLog(file), testLog(file)];
  const results = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).append(put(`k${i % 10}`))));
  assert.equal(results.filter((r) => r.outcome === 'created').length, 10);
  assert.equal((await lines(file)).filter(Boolean).length, 10);
  assert.equal((await a.newest(100)).records.length, 10);
  assert.equal((await b.newest(100)).records.length, 10);
});

test('a torn last line gets a newline before the next record and is skipped by readers', async (t) => {
  const file = path.join(await tempDataDir(t), 'a.jsonl');
  await writeFile(file, '{"k":"a","id":"r-a"}\n{"k":"b","id":"r-');
  const log = testLog(file);
  assert.deepEqual((await log.newest(10)).records.map((r) => r.k), ['a']);
  const created = await log.append(put('c'));
  assert.equal(created.outcome, 'created');
  assert.deepEqual(await lines(file), ['{"k":"a","id":"r-a"}', '{"k":"b","id":"r-', JSON.stringify(created.record), '']);
  const page = await log.newest(10);
  assert.deepEqual(page.records.map((r) => r.k), ['c', 'a']);
  assert.equal(page.skipped, 1);
  // The torn key was never stored: it can be written now.
  assert.equal((await log.append(put('b'))).outcome, 'created');
});

test('appendRecords alone repairs a torn file and writes whole lines', async (t) => {
  const file = path.join(await tempDataDir(t), 'new', 'x.jsonl');
  const first = await appendRecords(file, [{ a: 1 }, { b: 'two\nlines' }]);
  assert.deepEqual(first, { start: 0, end: Buffer.byteLength('{"a":1}\n{"b":"two\\nlines"}\n') });
  await appendFile(file, '{"torn":');
  const second = await appendRecords(file, [{ c: 3 }]);
  assert.equal(second.start, first.end + '{"torn":'.length + 1);
  assert.equal(await readFile(file, 'utf8'), '{"a":1}\n{"b":"two\\nlines"}\n{"torn":\n{"c":3}\n');
});

test('the index catches up with lines other writers append, and leaves a partial line until it ends', async (t) => {
  const file = path.join(await tempDataDir(t), 'a.jsonl');
  const log = testLog(file);
  await log.append(put('a'));
  await appendFile(file, '{"k":"x","group":"g"}\nnot json\n{"k":"y","gro');
  const cases: [string, () => ReturnType<RecordLog['newest']>][] = [
    ['read backwards', () => log.newest(10)],
    ['through the index', () => log.newest(10, { facet: 'group', value: 'g' })],
  ];
  for (const [name, read] of cases) {
    const page = await read();
    assert.deepEqual(page.records.map((r) => r.k).filter((k) => k !== 'a'), ['x'], name);
    assert.equal(page.skipped, 2, `${name}: the corrupt line and the partial one`);
  }
  await appendFile(file, 'up":"g"}\n');
  const page = await log.newest(10, { facet: 'group', value: 'g' });
  assert.deepEqual(page.records.map((r) => r.k), ['y', 'x']);
  assert.equal(page.skipped, 1);
  assert.equal((await log.append(put('y'))).outcome, 'conflict');
});

test('a file cut short, replaced or removed is read again from the start', async (t) => {
  const dir = await tempDataDir(t);
  const file = path.join(dir, 'a.jsonl');
  const log = testLog(file);
  await log.append(put('a'));
  await log.append(put('b'));
  const cases: [string, () => Promise<void>, string[]][] = [
    ['truncated and rewritten', () => writeFile(file, '{"k":"z"}\n'), ['z']],
    ['rewritten longer, same size prefix broken', () => writeFile(file, '{"k":"zz","pad":"----------"}\n{"k":"w"}\n'), ['w', 'zz']],
    [
      'replaced by another file',
      async () => {
        await writeFile(`${file}.new`, '{"k":"n1"}\n{"k":"n2"}\n{"k":"n3"}\n');
        await rename(`${file}.new`, file);
      },
      ['n3', 'n2', 'n1'],
    ],
    ['removed', () => rm(file), []],
  ];
  for (const [name, change, expected] of cases) {
    await t.test(name, async () => {
      await change();
      // `since` answers from the index, which must notice the change.
      assert.deepEqual((await log.since('start', 10))?.map((r) => r.k), [...expected].reverse());
      assert.deepEqual((await log.newest(10)).records.map((r) => r.k), expected);
    });
  }
});

test('newest counts the skipped lines within the page it returns', async (t) => {
  const file = path.join(await tempDataDir(t), 'a.jsonl');
  await writeFile(file, ['bad1', '{"k":"a"}', 'bad2', '{"k":"b"}', '[1]', '{"k":"c"}', '{"no":"key"}', ''].join('\n'));
  const log = testLog(file);
  const cases: [number, string[], number][] = [
    [1, ['c'], 1],
    [2, ['c', 'b'], 2],
    [3, ['c', 'b', 'a'], 3],
    [10, ['c', 'b', 'a'], 4],
  ];
  for (const [limit, keys, skipped] of cases) {
    const page = await log.newest(limit);
    assert.deepEqual(page.records.map((r) => r.k), keys, `limit ${limit}`);
    assert.equal(page.skipped, skipped, `limit ${limit}`);
  }
});

test('since: after a cursor, from the start, or undefined for an unknown cursor', async (t) => {
  const file = path.join(await tempDataDir(t), 'a.jsonl');
  const log = testLog(file);
  for (const [k, group] of [['a', 'g'], ['b', 'h'], ['c', 'g'], ['d', 'g']]) await log.append({ ...put(k as string), create: () => ({ k, group, id: `id-${k}` }) });
  const cases: [string, Parameters<RecordLog['since']>, string[] | undefined][] = [
    ['after a', [{ facet: 'id', value: 'id-a' }, 10], ['b', 'c', 'd']],
    ['after a, group g', [{ facet: 'id', value: 'id-a' }, 10, { facet: 'group', value: 'g' }], ['c', 'd']],
    ['from the start, at most 2', ['start', 2], ['c', 'd']],
    ['after the last', [{ facet: 'id', value: 'id-d' }, 10], []],
    ['unknown cursor', [{ facet: 'id', value: 'nope' }, 10], undefined],
  ];
  for (const [name, args, expected] of cases) {
    await t.test(name, async () => {
      const records = await log.since(...args);
      assert.deepEqual(records?.map((r) => r.k), expected);
    });
  }
  assert.equal((await log.find('id', 'id-c'))?.k, 'c');
  assert.equal(await log.find('id', 'nope'), undefined);
});

test('subscribers hear of every new record, by this index or another writer, and not of the initial load', async (t) => {
  const file = path.join(await tempDataDir(t), 'a.jsonl');
  await writeFile(file, '{"k":"old"}\n');
  const log = testLog(file);
  const heard: string[] = [];
  log.subscribe((records) => heard.push(...records.map((r) => r.k as string)));
  await log.refresh();
  assert.deepEqual(heard, []);
  await log.append(put('mine'));
  await appendFile(file, '{"k":"theirs"}\n');
  await log.refresh();
  await log.append(put('mine')); // a replay is not news
  assert.deepEqual(heard, ['mine', 'theirs']);
});

test('a missing log reads as empty and is created on the first append', async (t) => {
  const dir = await tempDataDir(t);
  const file = path.join(dir, 'not', 'yet', 'a.jsonl');
  const log = testLog(file);
  assert.deepEqual(await log.newest(5), { records: [], skipped: 0 });
  assert.equal(await log.since('start', 5).then((r) => r?.length), 0);
  assert.equal((await log.append(put('a'))).outcome, 'created');
  assert.equal((await lines(file)).length, 2);
});

// When a writer died holding the lock, writers that find it stale at the same
// time must not each unlink "the stale lock": a later one could unlink the
// fresh lock of an earlier one, so two would hold it and a (board, task_id)
// could be stored twice. file-lock.ts serialises the breaking of a lock.
test('writers that break a dead writer\'s lock at once never hold it together', async (t) => {
  const dir = await tempDataDir(t);
  const { spawnSync } = await import('node:child_process');
  const { withFileLock } = await import('../src/core/file-lock.ts');
  const { newLockOwner } = await import('../src/core/lock-owner.ts');
  const deadPid = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
  let worst = 0;
  for (let round = 0; round < 20; round++) {
    const lock = path.join(dir, `round-${round}.lock`);
    await writeFile(lock, JSON.stringify({ ...newLockOwner(), pid: Number(deadPid) }));
    let inside = 0;
    await Promise.all(
      Array.from({ length: 10 }, () =>
        withFileLock(lock, async () => {
          inside++;
          worst = Math.max(worst, inside);
          await new Promise((r) => setTimeout(r, 5));
          inside--;
        }),
      ),
    );
  }
  assert.equal(worst, 1);
});

test('a lock left by a writer that died is broken, and the append goes through', async (t) => {
  const file = path.join(await tempDataDir(t), 'a.jsonl');
  const { spawnSync } = await import('node:child_process');
  const { newLockOwner } = await import('../src/core/lock-owner.ts');
  const deadPid = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
  await writeFile(`${file}.lock`, JSON.stringify({ ...newLockOwner(), pid: Number(deadPid) }));
  const result = await testLog(file).append(put('a'));
  assert.equal(result.outcome, 'created');
  assert.equal((await lines(file)).length, 2);
});

test('a page over 100 is kept while the log is unchanged: the same frozen page again, a new one once anything is appended', async (t) => {
  const file = path.join(await tempDataDir(t), 'long.jsonl');
  await writeFile(file, '');
  const log = testLog(file);
  for (let i = 0; i < 300; i++) await appendFile(file, `${JSON.stringify({ k: `k${i}`, group: i % 2 ? 'odd' : 'even' })}\n`);
  await log.refresh();
  const cases: [string, { facet: string; value: string } | undefined, (k: number) => boolean][] = [
    ['unfiltered', undefined, () => true],
    ['one group', { facet: 'group', value: 'odd' }, (k) => k % 2 === 1],
  ];
  let next = 300;
  for (const [name, where, matches] of cases) {
    await t.test(name, async () => {
      const first = await log.newest(120, where);
      const again = await log.newest(120, where);
      assert.equal(again, first, 'the same page object while the log is unchanged');
      assert.ok(Object.isFrozen(first) && Object.isFrozen(first.records) && Object.isFrozen(first.records[0]));
      assert.equal(first.records.length, 120);
      assert.notEqual(await log.newest(121, where), first, 'another limit is another page');
      // Another process appends: the next read has it, whatever was kept.
      const k = next++;
      await appendFile(file, `${JSON.stringify({ k: `k${k}`, group: k % 2 ? 'odd' : 'even' })}\n`);
      const after = await log.newest(120, where);
      assert.notEqual(after, first);
      const newest = after.records[0]?.k;
      assert.equal(newest, matches(k) ? `k${k}` : first.records[0]?.k);
      // And this process appends through the log.
      const own = await log.append(put(`own-${name}`, { group: where?.value ?? 'even' }));
      assert.equal(own.outcome, 'created');
      assert.equal((await log.newest(120, where)).records[0]?.k, `own-${name}`);
    });
  }
});

// Appends go through a handle kept between them (RecordLog #openWriter) and
// are indexed from the bytes written: each append must still go to the file
// the path names now, be checked against its records, and leave the index
// as a fresh read of the file would.
test('appends follow the file the path names: replaced, cut short, removed, or a link in its place', async (t) => {
  const dir = await tempDataDir(t);
  const file = path.join(dir, 'a.jsonl');
  const log = testLog(file);
  assert.equal((await log.append(put('a'))).outcome, 'created');
  // [case, the change, the key appended after it (with v: 2), its outcome, the keys in the file then]
  const cases: [string, () => Promise<void>, string, 'created' | 'replayed' | 'conflict', string[]][] = [
    [
      'replaced (a prune renames a new file over it)',
      async () => {
        await writeFile(`${file}.new`, '{"k":"n1","id":"x"}\n');
        await rename(`${file}.new`, file);
      },
      'n1',
      'conflict',
      ['n1'],
    ],
    ['replaced, then a new key', async () => {}, 'n2', 'created', ['n1', 'n2']],
    ['cut short in place', () => writeFile(file, ''), 'n1', 'created', ['n1']],
    ['removed', () => rm(file), 'r', 'created', ['r']],
  ];
  for (const [name, change, key, outcome, keys] of cases) {
    await t.test(name, async () => {
      await change();
      assert.equal((await log.append(put(key, { v: 2 }))).outcome, outcome);
      assert.deepEqual((await lines(file)).filter(Boolean).map((l) => (JSON.parse(l) as JsonRecord).k), keys);
      assert.deepEqual((await log.newest(10)).records.map((r) => r.k), [...keys].reverse());
    });
  }
  await t.test('a link in its place is refused, and nothing is written through it', async () => {
    const outside = path.join(path.dirname(dir), `outside-${path.basename(dir)}.jsonl`);
    await writeFile(outside, '');
    t.after(() => rm(outside, { force: true }));
    await rm(file);
    await symlink(outside, file);
    await assert.rejects(log.append(put('l')), /a\.jsonl in the data dir is a symbolic link/);
    assert.equal(await readFile(outside, 'utf8'), '');
  });
});

test('the index of what a log appended answers as a fresh read of the file does, with other writers and a torn line between', async (t) => {
  const file = path.join(await tempDataDir(t), 'a.jsonl');
  const log = testLog(file);
  const heard: string[] = [];
  for (let round = 0; round < 4; round++) {
    const batch = Array.from({ length: 5 }, (_, i) => put(`k${round}-${i}`, { group: i % 2 ? 'odd' : 'even' }));
    await Promise.all(batch.map((r) => log.append(r)));
    if (round === 1) log.subscribe((records) => heard.push(...records.map((r) => r.k as string)));
    // Another writer (without this log), and once a torn line, between this log's appends.
    await appendFile(file, round === 2 ? '{"k":"torn",' : `${JSON.stringify({ k: `other-${round}`, group: 'odd' })}\n`);
  }
  await log.append(put('last', { group: 'odd' }));
  const fresh = testLog(file);
  for (const where of [undefined, { facet: 'group', value: 'odd' }, { facet: 'group', value: 'even' }]) {
    assert.deepEqual(await log.newest(100, where), await fresh.newest(100, where), JSON.stringify(where));
    assert.deepEqual(await log.since('start', 100, where), await fresh.since('start', 100, where));
  }
  assert.equal((await log.newest(100)).skipped, 1, 'the torn line is a line of its own, skipped');
  assert.deepEqual((await log.find('id', (await fresh.newest(1)).records[0]?.id as string))?.k, 'last');
  assert.deepEqual(heard, ['other-1', 'k2-0', 'k2-1', 'k2-2', 'k2-3', 'k2-4', 'k3-0', 'k3-1', 'k3-2', 'k3-3', 'k3-4', 'other-3', 'last']);
});

test('a log that indexes some fields takes its appended records for their lines only when a read of the line gives the same', async (t) => {
  const file = path.join(await tempDataDir(t), 'fields.jsonl');
  const fieldsLog = () =>
    new RecordLog({
      file,
      // `group` absent or undefined reads as no group; written as undefined, the line has none.
      accept: (r) => typeof r.k === 'string' && (r.group === undefined || typeof r.group === 'string'),
      key: (r) => r.k as string,
      facets: { group: (r) => (typeof r.group === 'string' ? r.group : 'none'), kind: (r) => typeof r.v },
      fields: ['k', 'group', 'v'],
    });
  const log = fieldsLog();
  assert.equal((await log.append(put('first'))).outcome, 'created');
  const values: [string, unknown][] = [
    ['string', 'text'],
    ['number', 3.5],
    ['minus zero', -0],
    ['nested', { a: [1, { b: 2 }] }],
    ['array', [1, 2]],
    ['a date', new Date(0)],
    ['undefined', undefined],
    ['null', null],
  ];
  await Promise.all(values.map(([name, v], i) => log.append({ key: name, same: () => true, create: () => ({ k: name, group: i % 3 ? 'g' : undefined, v }) })));
  const fresh = fieldsLog();
  for (const where of [undefined, { facet: 'group', value: 'g' }, { facet: 'group', value: 'none' }, { facet: 'kind', value: 'object' }, { facet: 'kind', value: 'string' }, { facet: 'kind', value: 'undefined' }]) {
    assert.deepEqual(await log.since('start', 100, where), await fresh.since('start', 100, where), JSON.stringify(where));
  }
  assert.deepEqual((await log.since('start', 100, { facet: 'kind', value: 'string' }))?.map((r) => r.k), ['string', 'a date']);
  assert.deepEqual((await log.since('start', 100, { facet: 'group', value: 'none' }))?.map((r) => r.k), ['first', 'string', 'nested', 'undefined']);
});
