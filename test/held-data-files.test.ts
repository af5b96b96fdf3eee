import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFile, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { dataPath } from '../src/core/data-files.ts';
import { openForRead } from '../src/core/held-data-files.ts';
import { tailRecords } from '../src/core/jsonl/tail-records.ts';
import { tempDataDir } from './helpers/data-dir.ts';

// The handles of the data dir's top-level logs are kept between reads, and
// a kept handle serves a read only while the path still names its file: a
// read sees every append, truncation and rewrite, a rotated or removed log is
// opened anew, a link or a FIFO in its place is refused, and no handle is
// closed under a read that uses it.

const values = async (file: string) => (await tailRecords(file, 10, { shared: true })).records.map((r) => r.v);

test('a kept handle: reads see appends, rewrites, truncation, rotation and removal', async (t) => {
  const dir = await tempDataDir(t);
  const file = dataPath(dir, 'trends');
  await writeFile(file, '{"v":1}\n');
  assert.deepEqual(await values(file), [1]);
  const first = await openForRead(file);
  await first.done();
  const again = await openForRead(file);
  await again.done();
  assert.equal(again.handle, first.handle, 'the same handle serves the next read');

  await appendFile(file, '{"v":2}\n');
  assert.deepEqual(await values(file), [2, 1]);
  await writeFile(file, '{"v":3}\n');
  assert.deepEqual(await values(file), [3]);
  await writeFile(file, '');
  assert.deepEqual(await values(file), []);

  await writeFile(`${file}.new`, '{"v":4}\n');
  await rename(`${file}.new`, file);
  assert.deepEqual(await values(file), [4], 'a rotated log is opened anew');
  const rotated = await openForRead(file);
  await rotated.done();
  assert.notEqual(rotated.handle, first.handle);
  assert.equal(first.handle.fd, -1, 'the handle of the old file is closed');

  await rm(file);
  assert.deepEqual(await values(file), []);
  assert.equal(rotated.handle.fd, -1, 'the handle of a removed log is closed');
});

test('a link or a FIFO that takes a kept log\'s place is refused', async (t) => {
  const dir = await tempDataDir(t);
  const file = dataPath(dir, 'trends');
  const outside = path.join(path.dirname(dir), 'outside.jsonl');
  await writeFile(outside, '{"secret":true}\n');
  await writeFile(file, '{"v":1}\n');
  assert.deepEqual(await values(file), [1]);
  await rm(file);
  await symlink(outside, file);
  await assert.rejects(values(file), /trends\.jsonl in the data dir is a symbolic link/);
  if (process.platform !== 'win32') {
    await rm(file);
    execFileSync('mkfifo', ['-m', '600', file]);
    await assert.rejects(values(file), /trends\.jsonl in the data dir is a FIFO/);
  }
});

test('a handle that is no longer kept closes only when its last read is done', async (t) => {
  const dir = await tempDataDir(t);
  const file = dataPath(dir, 'disk');
  await writeFile(file, '{"v":1}\n');
  const reading = await openForRead(file);
  await writeFile(`${file}.new`, '{"v":2}\n');
  await rename(`${file}.new`, file);
  const next = await openForRead(file);
  assert.notEqual(next.handle, reading.handle);
  const buffer = Buffer.alloc(8);
  const { bytesRead } = await reading.handle.read(buffer, 0, 8, 0);
  assert.equal(buffer.subarray(0, bytesRead).toString(), '{"v":1}\n', 'the dropped handle still reads its file');
  await reading.done();
  assert.equal(reading.handle.fd, -1);
  await next.done();
  assert.notEqual(next.handle.fd, -1, 'the kept handle stays open');
});

test('files under a folder of the data dir are opened for each read; at most 16 handles are kept', async (t) => {
  const dir = await tempDataDir(t);
  const completions = dataPath(dir, 'completions');
  await mkdir(path.dirname(completions), { recursive: true });
  await writeFile(completions, '{"v":1}\n');
  const a = await openForRead(completions);
  await a.done();
  const b = await openForRead(completions);
  await b.done();
  assert.notEqual(a.handle, b.handle);
  assert.equal(a.handle.fd, -1);

  const handles = [];
  for (let i = 0; i < 20; i++) {
    const file = path.join(dir, `log-${i}.jsonl`);
    await writeFile(file, '{"v":1}\n');
    const read = await openForRead(file);
    await read.done();
    handles.push(read.handle);
  }
  assert.equal(handles.filter((h) => h.fd !== -1).length, 16);
  assert.ok(handles.slice(0, 4).every((h) => h.fd === -1), 'the oldest went first');
});

test('concurrent tail reads of several logs, lines across chunk boundaries, each get their own lines', async (t) => {
  const dir = await tempDataDir(t);
  const files: string[] = [];
  const expected: unknown[][] = [];
  for (let f = 0; f < 4; f++) {
    const file = path.join(dir, `log-${f}.jsonl`);
    // Lines of 1 KB to 90 KB: some straddle the 64 KiB chunks the reader takes.
    const lines = Array.from({ length: 12 }, (_, i) => JSON.stringify({ v: `${f}-${i}`, pad: String(f).repeat(1000 + ((i * 7919) % 90_000)) }));
    await writeFile(file, `${lines.join('\n')}\n`);
    files.push(file);
    expected.push(lines.map((l) => (JSON.parse(l) as { v: string }).v).reverse().slice(0, 10));
  }
  const reads = Array.from({ length: 40 }, (_, i) => values(files[i % 4] as string).then((got) => [i % 4, got] as const));
  for (const [f, got] of await Promise.all(reads)) assert.deepEqual(got, expected[f]);
});
