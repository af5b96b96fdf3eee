import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { createKey } from '../src/core/keys/key-store.ts';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { startServer, type TestServer } from './helpers/server.ts';

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
const statusWith = async (server: TestServer, key: string) => (await server.get('/trends', { 'X-API-Key': key })).status;

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

    const listed = await runEstate(['keys', 'list', '--json', '--data-dir', dir]);
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

    const next = await server.get('/trends', { 'X-API-Key': unused[0] as string });
    assert.equal(next.status, 503, `the very next request: ${next.text}`);
    assert.match(next.json.detail, /^the credential store is corrupt: /);
    assert.ok(!next.text.includes('keys.json') && !next.text.includes(dir), `no file name or path: ${next.text}`);
    const ready = await server.get('/readyz');
    assert.equal(ready.status, 503, ready.text);
    assert.equal(ready.json.detail, 'not ready: credential_store failed (corrupt)');
    // Once the server has ended every write it had under way, the torn store is still there.
    await server.stop();
    assert.deepEqual(readFileSync(file), torn, 'no write put the old store back');
  });
}
