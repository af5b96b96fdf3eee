import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { withFileLock } from '../src/core/file-lock.ts';
import { RecordLog } from '../src/core/record-log.ts';
import { pruneFile } from '../src/core/retention/prune-file.ts';
import { tempDataDir } from './helpers/data-dir.ts';

// A prune of a log an estate RecordLog writes and indexes: the prune takes
// the writer lock the RecordLog takes (`<file>.lock`), and the index,
// rebuilt from the new file (another inode), answers the kept records,
// still knows their keys, and tells subscribers only of new records.

const OLD = '2000-01-01T00:00:00.000Z';

function testLog(file: string): RecordLog {
  return new RecordLog({ file, accept: (r) => typeof r.k === 'string', key: (r) => r.k as string, facets: { id: (r) => r.id as string | undefined } });
}

const put = (k: string, ts: string) => ({ key: k, same: (r: Record<string, unknown>) => r.k === k, create: () => ({ k, ts, id: `id-${k}` }) });

test('prune of an indexed log: appends made by estate during it all land; the index follows the new file', async (t) => {
  const file = path.join(await tempDataDir(t), 'a.jsonl');
  const lines = [];
  for (let i = 0; i < 5000; i++) lines.push(JSON.stringify({ k: `h${i}`, ts: i % 2 ? OLD : new Date().toISOString(), id: `id-h${i}` }));
  await writeFile(file, `${lines.join('\n')}\n`);
  const log = testLog(file);
  await log.refresh();
  const heard: string[] = [];
  log.subscribe((records) => heard.push(...records.map((r) => r.k as string)));

  // Appends queued at once with the prune: each waits for the lock or goes first; none is lost.
  const fresh = Array.from({ length: 50 }, (_, i) => `n${i}`);
  const [counts, ...results] = await Promise.all([pruneFile(file, new Date(Date.now() - 86_400_000)), ...fresh.map((k) => log.append(put(k, new Date().toISOString())))]);
  assert.equal(counts.dropped, 2500);
  assert.deepEqual(results.map((r) => r.outcome), fresh.map(() => 'created'));

  const stored = (await readFile(file, 'utf8')).trimEnd().split('\n').map((l) => JSON.parse(l) as { k: string; ts: string });
  assert.ok(stored.every((r) => r.ts !== OLD));
  assert.deepEqual(stored.filter((r) => r.k.startsWith('n')).map((r) => r.k), fresh);
  assert.equal(stored.length, 2500 + fresh.length);

  // The index reads the new file: its pages are the file's records, and a kept key is still known.
  assert.deepEqual((await log.newest(3)).records.map((r) => r.k), stored.slice(-3).reverse().map((r) => r.k));
  assert.deepEqual((await log.since('start', 10_000))?.map((r) => r.k), stored.map((r) => r.k));
  assert.equal((await log.append(put('h0', 'x'))).outcome, 'replayed');
  assert.equal(await log.find('id', 'id-h1'), undefined, 'a pruned record is gone from the index');
  await log.refresh();
  assert.deepEqual([...heard].sort(), [...fresh].sort(), 'subscribers hear of the new records only, once each');
});

test('prune takes the lock an estate writer of the log takes, <file>.lock: while another holds it, it waits, then gives up and changes nothing', async (t) => {
  const file = path.join(await tempDataDir(t), 'a.jsonl');
  const text = `${JSON.stringify({ k: 'a', ts: OLD })}\n${JSON.stringify({ k: 'b', ts: new Date().toISOString() })}\n`;
  await writeFile(file, text);
  await withFileLock(`${file}.lock`, async () => {
    await assert.rejects(pruneFile(file, new Date(), { lockTimeoutMs: 200 }), (err: Error & { code?: string }) => err.code === 'unavailable' && /a\.jsonl\.lock/.test(err.message));
  });
  assert.equal(await readFile(file, 'utf8'), text);
  assert.equal((await pruneFile(file, new Date(Date.now() - 60_000))).dropped, 1);
});
