import assert from 'node:assert/strict';
import { appendFile, open, stat, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { IndexedFile } from '../src/core/jsonl/indexed-file.ts';
import { tempDataDir } from './helpers/data-dir.ts';

// What an index tells a reader of the file it holds open (IndexedFile.cover),
// when the index has read further than the reader looked: read by a catch-up
// that took its stat after the reader's (appended since: the index knows every
// record before the reader's end too), or not (cut short since: the index is
// of other bytes now). The order of the stats is the tickets', not the clock's.

const OPTIONS = { accept: (r: Record<string, unknown>) => typeof r.k === 'string', key: (r: Record<string, unknown>) => r.k as string, facets: {} };
const lines = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `${JSON.stringify({ k: `key-${from + i}` })}\n`).join('');

test('an index that read past a reader\'s stat covers it when the file grew since, not when it was cut short', async (t) => {
  const file = path.join(await tempDataDir(t), 'log.jsonl');
  await writeFile(file, lines(0, 3));
  const indexed = new IndexedFile(OPTIONS);
  const handle = await open(file, 'r');
  t.after(() => handle.close());
  const early = await stat(file);
  const ticket = indexed.ticket();
  await appendFile(file, lines(3, 5));
  await indexed.catchUp(handle, false);

  const cover = indexed.cover(early, ticket);
  assert.ok(cover, 'the reader who looked before the append is covered');
  assert.equal(cover.unchanged, false);
  assert.equal(cover.end, (await stat(file)).size);
  assert.equal(cover.index.countBefore(early.size), 3, 'the index knows the three records the reader saw');

  // Cut short (same file, changed after the index read it), even within the same tick of the clock: not covered.
  await truncate(file, Buffer.byteLength(lines(0, 1)));
  const cut = await stat(file);
  assert.equal(indexed.cover(cut, indexed.ticket()), undefined);
  assert.equal(indexed.cover(cut), undefined, 'without a ticket, an index past the reader\'s end is never taken');
});
