import assert from 'node:assert/strict';
import { readdir, rename } from 'node:fs/promises';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { failWrites } from './helpers/fail-writes.ts';
import { startServer } from './helpers/server.ts';

// /readyz: whether the data dir can be read and written, for a load balancer;
// /healthz: whether the process runs, whatever the data dir does.

test('/readyz is 200 with its checks when the data dir can be read and written, and leaves nothing behind', async (t) => {
  const dir = await tempDataDir(t);
  const server = await startServer(t, dir);
  const before = (await readdir(dir)).sort();
  const answers = await Promise.all(Array.from({ length: 10 }, () => server.get('/readyz')));
  for (const r of answers) {
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { status: 'ready', checks: { data_dir_readable: 'ok', data_dir_writable: 'ok', credential_store: 'ok' } });
    assert.equal(r.headers.get('cache-control'), 'private, no-cache');
  }
  assert.deepEqual((await readdir(dir)).sort(), before, 'the probe file is removed');
  const cli = await runEstate(['readyz', '--json', '--data-dir', dir]);
  assert.equal(cli.code, 0, cli.stderr);
  assert.deepEqual(cli.json, answers[0]?.json);
});

test('/readyz is 503 naming the failed check (never a path); /healthz stays 200', async (t) => {
  const cases: [string, (dir: string) => Promise<unknown>, RegExp][] = [
    ['the data dir is gone', (dir) => rename(dir, `${dir}.moved`), /^not ready: data_dir_readable failed \(ENOENT\)$/],
    ['writes fail (read-only)', () => failWrites(t, 'EROFS'), /^not ready: data_dir_writable failed \(EROFS\)$/],
    ['writes fail (disk full)', () => failWrites(t, 'ENOSPC'), /^not ready: data_dir_writable failed \(ENOSPC\)$/],
  ];
  for (const [name, breakIt, detail] of cases) {
    await t.test(name, async (t) => {
      const dir = await tempDataDir(t);
      const server = await startServer(t, dir);
      assert.equal((await server.get('/readyz')).status, 200);
      const restore = await breakIt(dir);
      const r = await server.get('/readyz');
      assert.equal(r.status, 503);
      assert.match(r.json.detail, detail);
      assert.equal(r.headers.get('retry-after'), '5', 'a balancer is told when to ask again');
      assert.ok(!r.text.includes(dir), 'no path in the body');
      const live = await server.get('/healthz');
      assert.equal(live.status, 200);
      assert.deepEqual(live.json, { status: 'ok' });
      if (typeof restore === 'function') restore();
    });
  }
});
