import assert from 'node:assert/strict';
import { open, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { BackwardLines, MORE, readLinesBackward } from '../src/core/jsonl/read-lines-backward.ts';
import { scanRecords } from '../src/core/jsonl/scan-records.ts';
import { tailRecords } from '../src/core/jsonl/tail-records.ts';
import { tempDataDir } from './helpers/data-dir.ts';

async function collect<T>(gen: AsyncGenerator<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const line of gen) out.push(line);
  return out;
}

test('readLinesBackward yields every line, last first, whatever the chunk size', async (t) => {
  const dir = await tempDataDir(t);
  const lines = ['{"a":1}', '{"b":"é🙂ü"}', '', '{"c":"' + 'x'.repeat(300) + '"}', '{"d":4}'];
  const cases: [string, string][] = [
    ['trailing newline', `${lines.join('\n')}\n`],
    ['no trailing newline', lines.join('\n')],
    ['CRLF line ends', `${lines.join('\r\n')}\r\n`],
  ];
  for (const [name, text] of cases) {
    for (const chunk of [1, 2, 3, 7, 64, 65_536]) {
      await t.test(`${name}, chunk ${chunk}`, async () => {
        const file = path.join(dir, 'f.jsonl');
        await writeFile(file, text);
        const got = (await collect(readLinesBackward(file, chunk))).map((l) => l?.replace(/\r$/, '')).filter((l) => l !== '');
        assert.deepEqual(got, lines.filter((l) => l !== '').reverse());
      });
    }
  }
});

test('readLinesBackward of a missing file yields nothing', async (t) => {
  const dir = await tempDataDir(t);
  assert.deepEqual(await collect(readLinesBackward(path.join(dir, 'nope.jsonl'))), []);
});

test('tailRecords skips and counts lines that are not JSON objects', async (t) => {
  const dir = await tempDataDir(t);
  const file = path.join(dir, 'f.jsonl');
  await writeFile(file, '{"i":1}\nnull\n"str"\n42\n[1]\n{"i":2}\n{bad\n{"i":3}\n{"i":4,"tor');
  const { records, skipped } = await tailRecords(file, 10);
  assert.deepEqual(records, [{ i: 3 }, { i: 2 }, { i: 1 }]);
  assert.equal(skipped, 6);
  const two = await tailRecords(file, 2);
  assert.deepEqual(two.records, [{ i: 3 }, { i: 2 }]);
  assert.equal(two.skipped, 2, 'only the lines read on the way count');
});

test('tailRecords filters with where and stops at until', async (t) => {
  const dir = await tempDataDir(t);
  const file = path.join(dir, 'f.jsonl');
  await writeFile(file, Array.from({ length: 20 }, (_, i) => JSON.stringify({ i, even: i % 2 === 0 })).join('\n'));
  const evens = await tailRecords(file, 3, { where: (r) => r.even === true });
  assert.deepEqual(evens.records.map((r) => r.i), [18, 16, 14]);
  const recent = await tailRecords(file, 100, { until: (r) => (r.i as number) < 15 });
  assert.deepEqual(recent.records.map((r) => r.i), [19, 18, 17, 16, 15]);
});

test('scanRecords streams oldest first and counts skipped lines', async (t) => {
  const dir = await tempDataDir(t);
  const file = path.join(dir, 'f.jsonl');
  await writeFile(file, '{"i":1}\nnope\n\n{"i":2}\n');
  const stats = { skipped: 0 };
  const got = [];
  for await (const r of scanRecords(file, stats)) got.push(r);
  assert.deepEqual(got, [{ i: 1 }, { i: 2 }]);
  assert.equal(stats.skipped, 1);
  const none = [];
  for await (const r of scanRecords(path.join(dir, 'missing.jsonl'))) none.push(r);
  assert.deepEqual(none, []);
});

test('BackwardLines.range reads the lines of a byte range of an open file: their starts, whether a newline ends each, and nothing past a short read', async (t) => {
  const dir = await tempDataDir(t);
  const file = path.join(dir, 'f.jsonl');
  const text = '{"a":1}\n{"b":2}\n\n{"c":3}\n{"torn"';
  await writeFile(file, text);
  const handle = await open(file, 'r');
  t.after(() => handle.close());
  const read = async (lines: BackwardLines) => {
    const out: [string | null, number, boolean][] = [];
    try {
      for (let line = lines.next(); line !== undefined; line = lines.next()) {
        if (line === MORE) await lines.read();
        else out.push([line, lines.lineStart, lines.lineEnded]);
      }
    } finally {
      await lines.close();
    }
    return out;
  };
  const starts = (s: string) => text.indexOf(s);
  for (const chunk of [1, 3, 64]) {
    assert.deepEqual(await read(BackwardLines.range(handle, 0, text.length, chunk)), [
      ['{"torn"', starts('{"torn"'), false],
      ['{"c":3}', starts('{"c":3}'), true],
      ['{"b":2}', starts('{"b":2}'), true],
      ['{"a":1}', 0, true],
    ], `chunk ${chunk}`);
    // A range that starts after a line and ends after a newline: every line ended, none before `from`.
    assert.deepEqual(await read(BackwardLines.range(handle, starts('{"b":2}'), starts('{"torn"'), chunk)), [
      ['{"c":3}', starts('{"c":3}'), true],
      ['{"b":2}', starts('{"b":2}'), true],
    ], `chunk ${chunk}, inner range`);
  }
  // The file is shorter than the range (it shrank under the reader): nothing glued from the wrong offsets.
  assert.deepEqual(await read(BackwardLines.range(handle, 0, text.length + 100, 64)), []);
  // close() leaves the caller's handle open.
  assert.equal((await handle.stat()).size, text.length);
});
