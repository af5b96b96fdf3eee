import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { writeFileAtomic } from '../src/core/atomic-write.ts';
import { createKey, listKeys, readKeys, touchKey } from '../src/core/keys/key-store.ts';
import { UsageRecorder } from '../src/core/keys/usage-recorder.ts';
import { CheckedFile } from '../src/core/keys/checked-file.ts';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { keySecret, startServer } from './helpers/server.ts';
import { waitUntil } from './helpers/wait-until.ts';

async function cliKey(dir: string, ...args: string[]): Promise<{ key_id: string; key: string; user_id: string; scopes: string[]; expires_at: string | null }> {
  const r = await runEstate(['keys', 'create', '--data-dir', dir, '--json', ...args]);
  assert.equal(r.code, 0, r.stderr);
  return r.json;
}

test('keys create/list through the CLI: keys.json holds only hashes, with mode 0600', async (t) => {
  const dir = await tempDataDir(t);
  const a = await cliKey(dir, '--user', 'alice', '--name', 'laptop');
  const b = await cliKey(dir, '--user', 'cron', '--scope', 'write', '--expires', '30d');
  assert.match(a.key, /^est_[0-9a-f]{12}_[A-Za-z0-9_-]{32}$/);
  assert.deepEqual(a.scopes, ['read', 'write']);
  assert.equal(a.expires_at, null);
  assert.deepEqual(b.scopes, ['write']);
  const days = (Date.parse(b.expires_at as string) - Date.now()) / 86_400_000;
  assert.ok(days > 29 && days <= 30, `expires in ${days} days`);

  const file = path.join(dir, 'keys.json');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const text = readFileSync(file, 'utf8');
  for (const { key } of [a, b]) {
    assert.ok(!text.includes(key), 'the key is not in keys.json');
    // The secret is everything after `est_<12 hex>_`: it may itself hold `_`, so it is not split on it.
    const secret = keySecret(key);
    assert.equal(secret.length, 32);
    assert.ok(!text.includes(secret), 'the secret part is not in keys.json');
  }

  const list = await runEstate(['keys', 'list', '--data-dir', dir, '--json']);
  assert.equal(list.code, 0, list.stderr);
  assert.equal(list.json.count, 2);
  const [first, second] = list.json.items;
  assert.deepEqual(Object.keys(first).sort(), ['created_at', 'expires_at', 'key_id', 'last_used_at', 'name', 'node', 'revoked_at', 'scopes', 'status', 'user_id']);
  assert.deepEqual([first.key_id, first.user_id, first.name, first.status], [a.key_id, 'alice', 'laptop', 'active']);
  assert.deepEqual([second.key_id, second.user_id, second.scopes, second.expires_at], [b.key_id, 'cron', ['write'], b.expires_at]);
  const table = await runEstate(['keys', 'list', '--data-dir', dir]);
  assert.equal(table.code, 0, table.stderr);
  for (const column of ['key_id', 'user_id', 'name', 'scopes', 'node', 'status', 'created_at', 'expires_at', 'last_used_at', 'revoked_at']) assert.ok(table.stdout.includes(column), column);
  for (const { key } of [a, b]) assert.ok(!list.stdout.includes(key) && !table.stdout.includes(key));

  const revoked = await runEstate(['keys', 'revoke', a.key_id, '--data-dir', dir, '--json']);
  assert.equal(revoked.code, 0, revoked.stderr);
  assert.equal(typeof revoked.json.revoked_at, 'string');
  assert.equal(revoked.json.hash, undefined);
  assert.equal((await runEstate(['keys', 'list', '--data-dir', dir, '--json'])).json.items[0].status, 'revoked');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const missing = await runEstate(['keys', 'revoke', '000000000000', '--data-dir', dir]);
  assert.equal(missing.code, 3);
});

test('keys create refuses bad values with exit 2 and one line', async (t) => {
  const dir = await tempDataDir(t);
  const cases: [string, string[], RegExp][] = [
    ['unknown scope', ['--user', 'a', '--scope', 'admin'], /--scope/],
    ['empty scope', ['--user', 'a', '--scope', ''], /--scope/],
    ['zero expiry', ['--user', 'a', '--expires', '0d'], /--expires/],
    ['unit-less expiry', ['--user', 'a', '--expires', '30'], /--expires/],
    ['unknown unit', ['--user', 'a', '--expires', '1y'], /--expires/],
    ['path-like user', ['--user', '../etc'], /invalid user/],
    ['long name', ['--user', 'a', '--name', 'x'.repeat(101)], /name/],
    ['a node without a scope', ['--user', 'a', '--node', 'web-1'], /--node needs --scope ingest/],
    ['a node for a read,write key', ['--user', 'a', '--scope', 'read,write', '--node', 'web-1'], /--node needs --scope ingest/],
    ['an empty node', ['--user', 'a', '--scope', 'ingest', '--node', ''], /invalid node/],
    ['a node of spaces', ['--user', 'a', '--scope', 'ingest', '--node', '   '], /invalid node/],
  ];
  for (const [name, args, message] of cases) {
    await t.test(name, async () => {
      const r = await runEstate(['keys', 'create', '--data-dir', dir, ...args]);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, /^estate: /);
      assert.match(r.stderr, message);
    });
  }
  assert.deepEqual(listKeys(dir), []);
});

test('rotation: a new key works at once, both are live, and the revoked one gets 403 at the next request, with no restart', async (t) => {
  const dir = await tempDataDir(t);
  const old = await cliKey(dir, '--user', 'alice', '--name', 'old');
  const server = await startServer(t, dir);
  assert.equal((await server.get('/trends', { 'X-API-Key': old.key })).status, 200);

  const next = await cliKey(dir, '--user', 'alice', '--name', 'new');
  assert.equal((await server.get('/trends', { 'X-API-Key': next.key })).status, 200, 'the new key works at once');
  assert.equal((await server.get('/trends', { 'X-API-Key': old.key })).status, 200, 'the old key still works');

  const r = await runEstate(['keys', 'revoke', old.key_id, '--data-dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal((await server.get('/trends', { 'X-API-Key': old.key })).status, 403, 'the revoked key is refused at once');
  const denied = await server.get('/trends', { Authorization: `Bearer ${old.key}` });
  assert.equal(denied.status, 403);
  assert.equal(denied.json.detail, 'Invalid credential');
  assert.equal((await server.get('/trends', { 'X-API-Key': next.key })).status, 200, 'the new key keeps working');
});

test('an expired key stops working on its own', async (t) => {
  const dir = await tempDataDir(t);
  let offsetMs = 0;
  const server = await startServer(t, dir, { now: () => new Date(Date.now() + offsetMs) });
  const key = await cliKey(dir, '--user', 'alice', '--expires', '1h');
  await waitUntil('the key is accepted', async () => (await server.get('/trends', { 'X-API-Key': key.key })).status === 200);
  offsetMs = 61 * 60_000;
  assert.equal((await server.get('/trends', { 'X-API-Key': key.key })).status, 403);
  assert.equal((await runEstate(['keys', 'list', '--data-dir', dir, '--json'])).json.items[0].status, 'active', 'the CLI uses the real clock');
});

test('the server records last_used_at in the background', async (t) => {
  const dir = await tempDataDir(t);
  const { info, key } = await createKey(dir, { userId: 'alice' });
  assert.equal(info.last_used_at, null);
  const server = await startServer(t, dir);
  assert.equal((await server.get('/trends', { 'X-API-Key': key })).status, 200);
  await waitUntil('last_used_at is written', () => listKeys(dir)[0]?.last_used_at !== null);
  assert.equal(statSync(path.join(dir, 'keys.json')).mode & 0o777, 0o600);
  assert.equal((await server.get('/trends', { 'X-API-Key': key })).status, 200, 'the key still works after the write');
});

test('UsageRecorder writes at most once a minute per key and never loses a revocation', async (t) => {
  const dir = await tempDataDir(t);
  const { info: a } = await createKey(dir, { userId: 'alice' });
  const { info: b } = await createKey(dir, { userId: 'bob' });
  const recorder = new UsageRecorder((keyId, at) => touchKey(dir, keyId, at));
  const t0 = new Date('2026-11-01T10:00:00.000Z');
  const at = (s: number) => new Date(t0.getTime() + s * 1000);
  const record = (id: string) => readKeys(dir).find((k) => k.key_id === id);
  const cases: [string, string, number, string | null][] = [
    ['first use is written', a.key_id, 0, at(0).toISOString()],
    ['a use 30 s later is not', a.key_id, 30, at(0).toISOString()],
    ['another key has its own minute', b.key_id, 31, at(31).toISOString()],
    ['a use 61 s after the write is', a.key_id, 61, at(61).toISOString()],
  ];
  for (const [name, keyId, s, expected] of cases) {
    await t.test(name, async () => {
      recorder.note(record(keyId) ?? assert.fail('no record'), at(s));
      await recorder.settle();
      assert.equal(record(keyId)?.last_used_at, expected);
    });
  }
  const stale = record(a.key_id) ?? assert.fail('no record');
  await runEstate(['keys', 'revoke', a.key_id, '--data-dir', dir]);
  recorder.note(stale, at(200));
  await recorder.settle();
  assert.equal(typeof record(a.key_id)?.revoked_at, 'string', 'the revocation survives a later usage write');
  assert.equal(record(a.key_id)?.last_used_at, at(200).toISOString());
});

test('CheckedFile: every get sees the file as it is, a file that cannot be parsed throws until it is repaired', async (t) => {
  const dir = await tempDataDir(t);
  const file = path.join(dir, 'checked.json');
  const read = () => (existsSync(file) ? readFileSync(file, 'utf8') : undefined);
  let parses = 0;
  const parse = (text: string | undefined) => {
    parses++;
    return text === undefined ? 0 : (JSON.parse(text) as { v: number }).v;
  };
  await writeFile(file, '{"v":1}');
  const checked = new CheckedFile(file, read, parse);
  assert.equal(checked.get(), 1);
  const cases: [string, () => Promise<unknown>, number | RegExp][] = [
    ['replaced by a rename', () => writeFileAtomic(file, '{"v":2}'), 2],
    // Same size, same inode, maybe the same timestamp tick: the stat alone cannot tell.
    ['rewritten in place, same size', () => writeFile(file, '{"v":3}'), 3],
    ['cut in place', () => writeFile(file, '{"v":'), /JSON/],
    ['still cut', async () => {}, /JSON/],
    ['repaired', () => writeFile(file, '{"v":44}'), 44],
    ['removed', () => unlink(file), 0],
    ['back', () => writeFile(file, '{"v":5}'), 5],
  ];
  for (const [name, change, expected] of cases) {
    await t.test(name, async () => {
      await change();
      if (typeof expected === 'number') assert.equal(checked.get(), expected);
      else assert.throws(() => checked.get(), expected);
    });
  }
  const before = parses;
  assert.equal(checked.get(), 5);
  assert.equal(parses, before, 'an unchanged text is not parsed again');
});

test('keys create --scope ingest --node NAME: a key bound to one node, shown with its node by keys list', async (t) => {
  const dir = await tempDataDir(t);
  const bound = await cliKey(dir, '--user', 'web-1', '--scope', 'ingest', '--node', 'web-1', '--name', 'collector');
  assert.deepEqual([bound.scopes, (bound as { node?: string }).node], [['ingest'], 'web-1']);
  const relay = await cliKey(dir, '--user', 'relay', '--scope', 'ingest');
  assert.deepEqual([relay.scopes, 'node' in relay], [['ingest'], false], 'without --node: any node, and no node field');
  const plain = await runEstate(['keys', 'create', '--data-dir', dir, '--user', 'web-2', '--scope', 'ingest', '--node', 'web-2']);
  assert.equal(plain.code, 0, plain.stderr);
  assert.match(plain.stderr, /^key [0-9a-f]{12} for user web-2 \(ingest for node web-2\) created/);
  const list = await runEstate(['keys', 'list', '--data-dir', dir, '--json']);
  assert.deepEqual(list.json.items.map((k: { scopes: string[]; node: string | null }) => [k.scopes, k.node]), [[['ingest'], 'web-1'], [['ingest'], null], [['ingest'], 'web-2']]);
  const table = await runEstate(['keys', 'list', '--data-dir', dir]);
  const [header, first] = table.stdout.split('\n');
  const column = header?.split('\t').indexOf('node') ?? -1;
  assert.ok(column >= 0, header);
  assert.equal(first?.split('\t')[column], 'web-1');
});
