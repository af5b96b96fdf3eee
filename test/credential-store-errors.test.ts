import assert from 'node:assert/strict';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { createToken } from '../src/core/keys/tokens.ts';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';
import { waitUntil } from './helpers/wait-until.ts';

// A keys.json that cannot be read or parsed: every request whose answer
// depends on it is a 503 naming the credential store (never its path or
// file name: the server's log has those),
// /readyz is 503, public routes and bearer tokens keep working, and the CLI
// prints one line and exits 1.

const DETAIL = /^the credential store is corrupt: no API key can be checked until it is restored from a backup, or removed and new keys created$/;

test('a corrupt keys.json: credentialed requests 503 naming the credential store, /readyz 503, public routes 200', async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir, 'alice');
  const { token } = await createToken(dir, { userId: 'bob', ttlMs: 60_000 });
  const logged: Record<string, unknown>[] = [];
  const server = await startServer(t, dir, { log: (line) => logged.push(line) });
  assert.equal((await server.get('/trends', { 'X-API-Key': key })).status, 200);
  // The key's last use is written in the background: let it land before breaking the file.
  await waitUntil('the last use recorded', async () => /"last_used_at": "/.test(await readFile(path.join(dir, 'keys.json'), 'utf8')));

  await writeFile(path.join(dir, 'keys.json'), '{"version": 1, "keys": [', { mode: 0o600 });
  for (const [method, route] of [['GET', '/trends'], ['GET', '/training/runs'], ['POST', '/work/complete']] as const) {
    for (const headers of [{ 'X-API-Key': key }, { Authorization: `Bearer ${key}` }] as Record<string, string>[]) {
      const r = await server.request(method, route, { headers, body: method === 'POST' ? {} : undefined });
      assert.equal(r.status, 503, `${method} ${route}: ${r.text}`);
      assert.match(r.json.detail, DETAIL);
      assert.ok(!r.text.includes(dir) && !r.text.includes('keys.json'), 'no path or file name in the body');
    }
  }
  // The operator finds the file in the server's log (the data dir's path redacted there).
  const errors = logged.filter((l) => l.level === 'error');
  assert.ok(errors.length > 0, 'the 503s are logged');
  for (const line of errors) assert.match(String(line.cause), /<data dir>\/keys\.json is not a key store/);
  const ready = await server.get('/readyz');
  assert.equal(ready.status, 503);
  assert.equal(ready.json.detail, 'not ready: credential_store failed (corrupt)');
  for (const route of ['/healthz', '/health', '/work/feed', '/estate/status']) {
    assert.equal((await server.get(route)).status, 200, route);
  }
  // A bearer token does not depend on keys.json.
  assert.equal((await server.get('/trends', { Authorization: `Bearer ${token}` })).status, 200);
  // Without a credential, a protected route is still a plain 403.
  assert.equal((await server.get('/trends')).status, 403);

  // Valid JSON of the wrong shape is corrupt too.
  await writeFile(path.join(dir, 'keys.json'), '{"version": 2, "keys": []}\n', { mode: 0o600 });
  const wrongShape = await server.get('/trends', { 'X-API-Key': key });
  assert.equal(wrongShape.status, 503);
  assert.match(wrongShape.json.detail, DETAIL);

  // Repaired: everything is back without a restart.
  const fresh = await tempDataDir(t);
  const freshKey = await newKey(fresh, 'carol');
  await writeFile(path.join(dir, 'keys.json'), await readFile(path.join(fresh, 'keys.json')), { mode: 0o600 });
  assert.equal((await server.get('/trends', { 'X-API-Key': freshKey })).status, 200);
  assert.equal((await server.get('/readyz')).status, 200);
});

test('an unreadable keys.json is a 503 naming the credential store and the error code', { skip: process.getuid?.() === 0 ? 'root reads any file' : false }, async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir, 'alice');
  const server = await startServer(t, dir);
  await chmod(path.join(dir, 'keys.json'), 0o000);
  t.after(() => chmod(path.join(dir, 'keys.json'), 0o600));
  const r = await server.get('/trends', { 'X-API-Key': key });
  assert.equal(r.status, 503);
  assert.match(r.json.detail, /^the credential store cannot be read \(EACCES\)/);
  const ready = await server.get('/readyz');
  assert.equal(ready.json.detail, 'not ready: credential_store failed (EACCES)');
});

test('a keys.json that is a folder is a 503 naming the credential store, and /readyz says it is refused', async (t) => {
  const dir = await tempDataDir(t);
  const server = await startServer(t, dir);
  await mkdir(path.join(dir, 'keys.json'));
  const r = await server.get('/trends', { 'X-API-Key': `est_0123456789ab_${'A'.repeat(32)}` });
  assert.equal(r.status, 503);
  assert.match(r.json.detail, /^the credential store is not a regular file: no API key can be checked/);
  assert.equal((await server.get('/readyz')).json.detail, 'not ready: credential_store failed (refused: not a regular file)');
});

test('the CLI on a corrupt keys.json: keys list, create and revoke print one line naming the credential store and exit 1', async (t) => {
  const dir = await tempDataDir(t);
  await newKey(dir, 'alice');
  await writeFile(path.join(dir, 'keys.json'), 'not json\n', { mode: 0o600 });
  for (const args of [['keys', 'list'], ['keys', 'create', '--user', 'bob'], ['keys', 'revoke', '0123456789ab']]) {
    const r = await runEstate([...args, '--data-dir', dir]);
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^estate: the credential store is corrupt: [^\n]*\n$/, args.join(' '));
    assert.ok(!r.stderr.includes(dir), 'no path');
  }
  const ready = await runEstate(['readyz', '--data-dir', dir]);
  assert.equal(ready.code, 1);
  assert.equal(ready.stderr, 'estate: not ready: credential_store failed (corrupt)\n');
});
