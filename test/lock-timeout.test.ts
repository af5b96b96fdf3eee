import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, rm, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { withFileLock } from '../src/core/file-lock.ts';
import { EstateError } from '../src/errors.ts';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { completionBody, logLines } from './helpers/records.ts';
import { newKey, readResponse, startServer } from './helpers/server.ts';

// A writer that cannot get the inter-process lock in time is busy, not
// broken: 503 with `Retry-After` and a detail that names the lock file but
// no path (CLI: one line, exit 1), never a 500. The lock here is held by a
// writer elsewhere (another container's owner line) that keeps it fresh, so
// no waiter may break it.

/** Plants a lock held by a live writer in another PID namespace, touched like its heartbeat would; removed after the test. */
async function holdForeignLock(t: { after: (fn: () => unknown) => void }, lockFile: string): Promise<() => Promise<void>> {
  await mkdir(path.dirname(lockFile), { recursive: true });
  await writeFile(lockFile, `${JSON.stringify({ host: 'other-host', boot: 'other-boot', pidns: 'pid:[4026532999]', pid: 1, token: randomBytes(16).toString('hex') })}\n`);
  const beat = setInterval(() => {
    const now = new Date();
    utimes(lockFile, now, now).catch(() => {});
  }, 50);
  const release = async () => {
    clearInterval(beat);
    await rm(lockFile, { force: true });
  };
  t.after(release);
  return release;
}

test('withFileLock gives up on a held lock with an unavailable error: 503, Retry-After, no path', async (t) => {
  const dir = await tempDataDir(t);
  const lockFile = path.join(dir, 'trends.jsonl.lock');
  await holdForeignLock(t, lockFile);
  let entered = false;
  const err = await withFileLock(lockFile, async () => (entered = true), { timeoutMs: 300 }).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.equal(entered, false);
  assert.ok(err instanceof EstateError, String(err));
  assert.equal(err.code, 'unavailable');
  assert.equal(err.status, 503);
  assert.deepEqual(err.headers, { 'Retry-After': '1' });
  assert.match(err.message, /^another writer has held the lock trends\.jsonl\.lock in the data dir for over 300 ms: nothing was written; retry shortly$/);
  assert.ok(!err.message.includes(dir), err.message);
});

test('POST /work/complete and `estate work complete` behind a held lock: 503 with Retry-After (CLI exit 1), nothing stored, then 201', { timeout: 120_000 }, async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const release = await holdForeignLock(t, path.join(dir, 'work', 'completions.jsonl.lock'));

  // The server waits its full 10 s for the lock: longer than the helper's request timeout.
  const r = await readResponse(
    await fetch(`${server.url}/work/complete`, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
      body: JSON.stringify(completionBody(1)),
      signal: AbortSignal.timeout(60_000),
    }),
  );
  assert.equal(r.status, 503, r.text);
  assert.equal(r.headers.get('retry-after'), '1');
  assert.match(r.json.detail, /^another writer has held the lock completions\.jsonl\.lock in the data dir for over 10 s: nothing was written; retry shortly$/);
  assert.ok(!r.text.includes(dir), r.text);

  const cli = await runEstate(['work', 'complete', '--task-id', 'T-2', '--board', 'ops', '--assignee', 'cron', '--title', 'x', '--data-dir', dir], { timeoutMs: 60_000 });
  assert.equal(cli.code, 1, cli.stderr);
  assert.match(cli.stderr, /^estate: another writer has held the lock completions\.jsonl\.lock in the data dir[^\n]*\n$/);
  assert.ok(!cli.stderr.includes(dir), cli.stderr);
  assert.deepEqual(await logLines(dir, 'work/completions.jsonl'), [], 'nothing stored');

  await release();
  const retried = await server.request('POST', '/work/complete', { headers: { 'X-API-Key': key }, body: completionBody(1) });
  assert.equal(retried.status, 201, retried.text);
});
