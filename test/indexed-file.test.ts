import assert from 'node:assert/strict';
import { appendFile, open, stat, truncate, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { IndexedFile } from '../src/core/jsonl/indexed-file.ts';
import { tempDataDir } from './helpers/data-dir.ts';

// What an index tells a reader of the file it holds open (IndexedFile.cover),
// when the index has read further than the reader looked: appended since the
// reader's stat (the index knows every record before the reader's end too),
// or cut short since (the index is of other bytes now).

const OPTIONS = { accept: (r: Record<string, unknown>) => typeof r.k === 'string', key: (r: Record<string, unknown>) => r.k as string, facets: {} };
const lines = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `${JSON.stringify({ k: `key-${from + i}` })}\n`).join('');

test('an index that read past a reader\'s stat covers it when the file grew since, not when it was cut short', async (t) => {
  const file = path.join(await tempDataDir(t), 'log.jsonl');
  await writeFile(file, lines(0, 3));
  const early = await stat(file);
  await appendFile(file, lines(3, 5));
  const indexed = new IndexedFile(OPTIONS);
  const handle = await open(file, 'r');
  t.after(() => handle.close());
  await indexed.catchUp(handle, false);

  const cover = indexed.cover(early);
  assert.ok(cover, 'the reader who looked before the append is covered');
  assert.equal(cover.unchanged, false);
  assert.equal(cover.end, (await stat(file)).size);
  assert.equal(cover.index.countBefore(early.size), 3, 'the index knows the three records the reader saw');

  // Cut short (same file, changed after the index read it): not covered.
  await truncate(file, Buffer.byteLength(lines(0, 1)));
  const later = new Date(Date.now() + 10_000);
  await utimes(file, later, later);
  assert.equal(indexed.cover(await stat(file)), undefined);
});
