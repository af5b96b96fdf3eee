import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { withFileLock } from '../src/core/file-lock.ts';
import { createKey, listKeys, touchKey } from '../src/core/keys/key-store.ts';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { readResponse, startServer, type TestResponse, type TestServer } from './helpers/server.ts';

// The key store as a field probe drives it: `estate keys create` and `estate
// keys revoke` processes all at once while a server authenticates every key
// (and so records each key's first use in keys.json, under the same lock).
// Every create that exits 0 keeps its key, every revoke its revocation; then
// keys.json cut in place (a plain write, the same inode) makes the very next
// request with a valid key a 503 naming the credential store, not its file,
// and nothing the server still had under way writes the old store back.
// bench/keys-probe.mjs runs the same 20 times.

const ROUNDS = 3;
const BEFORE = 8;
const CREATES = 14;
const REVOKES = 5;

const idOf = (key: string) => /^est_([0-9a-f]{12})_/.exec(key)?.[1] as string;

/** GET `route` with `key`: with no deadline of its own (a busy machine may hold one for seconds; the test's timeout bounds it). */
async function get(server: TestServer, route: string, key?: string): Promise<TestResponse> {
  return readResponse(await fetch(server.url + route, { headers: key ? { 'X-API-Key': key } : {} }));
}
const statusWith = async (server: TestServer, key: string) => (await get(server, '/trends', key)).status;

for (let round = 1; round <= ROUNDS; round++) {
  test(`round ${round}: concurrent keys create/revoke under a live server lose nothing, and a torn store is refused at once`, { timeout: 120_000 }, async (t) => {
    const dir = await tempDataDir(t);
    const keys: string[] = [];
    for (let i = 0; i < BEFORE; i++) keys.push((await createKey(dir, { userId: `before${i}` })).key);
    const server = await startServer(t, dir);

    // The server authenticates the first keys over and over, and each new key as soon as it is printed.
    let writing = true;
    const hammer = (async () => {
      while (writing) await Promise.all(keys.slice(0, BEFORE).map((key) => statusWith(server, key)));
    })();
    const revoked = keys.slice(0, REVOKES).map(idOf);
    const created: string[] = [];
    const writers = await Promise.all([
      ...Array.from({ length: CREATES }, async (_, i) => {
        const r = await runEstate(['keys', 'create', '--user', `probe${i}`, '--data-dir', dir], { timeoutMs: 60_000 });
        if (r.code === 0) {
          created.push(r.stdout.trim());
          assert.equal(await statusWith(server, r.stdout.trim()), 200, 'a new key works at once');
        }
        return { what: `create ${i}`, ...r };
      }),
      ...revoked.map(async (id) => ({ what: `revoke ${id}`, ...(await runEstate(['keys', 'revoke', id, '--data-dir', dir], { timeoutMs: 60_000 })) })),
    ]);
    writing = false;
    await hammer;
    for (const w of writers) assert.equal(w.code, 0, `${w.what}: ${w.stderr}`);

    const listed = await runEstate(['keys', 'list', '--json', '--data-dir', dir], { timeoutMs: 60_000 });
    assert.equal(listed.code, 0, listed.stderr);
    const byId = new Map<string, { revoked_at: string | null }>(listed.json.items.map((k: { key_id: string; revoked_at: string | null }) => [k.key_id, k]));
    const all = [...keys, ...created];
    assert.deepEqual(
      all.map(idOf).filter((id) => !byId.has(id)),
      [],
      `every acknowledged key is listed (${byId.size} listed, ${all.length} made)`,
    );
    for (const id of revoked) assert.equal(typeof byId.get(id)?.revoked_at, 'string', `the revocation of ${id} is kept`);
    for (const key of all) assert.equal(await statusWith(server, key), revoked.includes(idOf(key)) ? 403 : 200, idOf(key));

    // Keys never used yet: each first use starts a write of keys.json, still under way when the store is cut.
    const unused = await Promise.all(Array.from({ length: 6 }, async (_, i) => (await createKey(dir, { userId: `late${i}` })).key));
    for (const key of unused) assert.equal(await statusWith(server, key), 200);
    const file = path.join(dir, 'keys.json');
    const torn = readFileSync(file).subarray(0, 100);
    writeFileSync(file, torn);

    const next = await get(server, '/trends', unused[0]);
    assert.equal(next.status, 503, `the very next request: ${next.text}`);
    assert.match(next.json.detail, /^the credential store is corrupt: /);
    assert.ok(!next.text.includes('keys.json') && !next.text.includes(dir), `no file name or path: ${next.text}`);
    const ready = await get(server, '/readyz');
    assert.equal(ready.status, 503, ready.text);
    assert.equal(ready.json.detail, 'not ready: credential_store failed (corrupt)');
    // Once the server has ended every write it had under way, the torn store is still there.
    await server.stop();
    assert.deepEqual(readFileSync(file), torn, 'no write put the old store back');
  });
}

/** Runs `hook` each time a file is fsync'd in this process, until the test ends: in a writer of keys.json, after it read the file and before it replaces it. */
async function onSync(t: { after: (fn: () => void) => void }, hook: () => void): Promise<void> {
  const probe = await open(process.execPath, 'r');
  const proto = Object.getPrototypeOf(probe) as { sync: (this: FileHandle) => Promise<void> };
  await probe.close();
  const sync = proto.sync;
  proto.sync = async function (this: FileHandle) {
    await sync.call(this);
    hook();
  };
  t.after(() => (proto.sync = sync));
}

test('uses of keys recorded while a write waits for the lock are written together, once', async (t) => {
  const dir = await tempDataDir(t);
  const ids: string[] = [];
  for (let i = 0; i < 10; i++) ids.push((await createKey(dir, { userId: `u${i}` })).info.key_id);
  const at = new Date('2026-11-27T12:00:00.000Z');
  let writes = 0;
  await onSync(t, () => writes++);
  // Another writer holds the lock while the uses come in.
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let holding!: () => void;
  const holds = new Promise<void>((r) => (holding = r));
  const other = withFileLock(path.join(dir, 'keys.json.lock'), async () => {
    holding();
    await held;
  });
  await holds;
  const touches = ids.map((id, i) => touchKey(dir, id, new Date(at.getTime() + i * 1000)));
  release();
  await Promise.all([other, ...touches]);
  assert.equal(writes, 1, 'one write for ten uses');
  const lastUse = (id: string | undefined) => listKeys(dir).find((k) => k.key_id === id)?.last_used_at;
  assert.deepEqual(
    ids.map(lastUse),
    ids.map((_, i) => new Date(at.getTime() + i * 1000).toISOString()),
  );
  // A use after that write starts a write of its own.
  await touchKey(dir, ids[0] as string, new Date(at.getTime() + 60_000));
  assert.equal(writes, 2);
  assert.equal(lastUse(ids[0]), new Date(at.getTime() + 60_000).toISOString());
});

test('a write of keys.json never undoes a change made while it was under way by a writer that does not take the lock', async (t) => {
  const cases = [
    {
      name: 'a key added by hand: the new key is added beside it',
      change: (file: string) => {
        const store = JSON.parse(readFileSync(file, 'utf8'));
        store.keys.push({ ...store.keys[0], key_id: 'aaaaaaaaaaaa', user_id: 'by-hand' });
        writeFileSync(file, JSON.stringify(store));
      },
      check: async (dir: string, outcome: PromiseSettledResult<unknown>) => {
        assert.equal(outcome.status, 'fulfilled');
        assert.deepEqual(listKeys(dir).map((k) => k.user_id), ['first', 'by-hand', 'second']);
      },
    },
    {
      name: 'the store cut in place: nothing is written, the write fails naming the credential store',
      change: (file: string) => writeFileSync(file, readFileSync(file).subarray(0, 100)),
      check: async (dir: string, outcome: PromiseSettledResult<unknown>, changed?: Buffer) => {
        assert.equal(outcome.status, 'rejected');
        assert.match(String((outcome as PromiseRejectedResult).reason?.message), /^the credential store is corrupt/);
        assert.deepEqual(readFileSync(path.join(dir, 'keys.json')), changed, 'the torn store is left as it is');
      },
    },
  ];
  for (const c of cases) {
    await t.test(c.name, async (t) => {
      const dir = await tempDataDir(t);
      await createKey(dir, { userId: 'first' });
      const file = path.join(dir, 'keys.json');
      let changed: Buffer | undefined;
      await onSync(t, () => {
        if (changed) return;
        c.change(file);
        changed = readFileSync(file);
      });
      const [outcome] = await Promise.allSettled([createKey(dir, { userId: 'second' })]);
      assert.ok(changed, 'the change was made while the write was under way');
      await c.check(dir, outcome as PromiseSettledResult<unknown>, changed);
    });
  }
});
