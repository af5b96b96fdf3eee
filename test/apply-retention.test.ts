import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { applyRetention, prunedAtFile } from '../src/core/retention/apply-retention.ts';
import { createDataDirStore } from '../src/core/store/data-dir-store.ts';
import { tempDataDir } from './helpers/data-dir.ts';

// collect.retention's pass, once an hour whoever is due (apply-retention.ts),
// with the clock given: two processes due at the same moment, whose clocks
// were read a few milliseconds apart, prune once between them.

const HOUR = 3_600_000;

test('a pass is not due again within the hour, also for a process whose clock was read just before the pass that took the lock first', async (t) => {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'trends.jsonl'), `${JSON.stringify({ ts: '2000-01-01T00:00:00Z', cpu_pct: 1 })}\n`);
  const store = createDataDirStore(dir);
  t.after(() => store.close());
  const now = Date.parse('2026-12-07T12:00:00.000Z');

  const first = await applyRetention(store, dir, 86_400_000, new Date(now));
  assert.equal(first?.trends.removed, 1);
  assert.equal((await readFile(prunedAtFile(dir), 'utf8')).trim(), '2026-12-07T12:00:00.000Z');
  // Its clock read 5 ms earlier, before it waited for the lock the first held.
  assert.equal(await applyRetention(store, dir, 86_400_000, new Date(now - 5)), undefined);
  assert.equal(await applyRetention(store, dir, 86_400_000, new Date(now + HOUR - 1)), undefined);
  assert.ok(await applyRetention(store, dir, 86_400_000, new Date(now + HOUR)), 'due an hour later');
  // A time far ahead (a wrong clock's) is no pass.
  await writeFile(prunedAtFile(dir), '2027-06-01T00:00:00.000Z\n');
  assert.ok(await applyRetention(store, dir, 86_400_000, new Date(now + 2 * HOUR)), 'a stamp months ahead does not stop retention');
});
