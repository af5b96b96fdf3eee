import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { SignJWT } from 'jose';
import { ensureTokenSecret, readTokenSecret, TOKEN_SECRET_FILE } from '../src/core/keys/token-secret.ts';
import { createToken } from '../src/core/keys/tokens.ts';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { startServer } from './helpers/server.ts';
import { waitUntil } from './helpers/wait-until.ts';

const HOUR = 3_600_000;
const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

async function cliToken(dir: string, ...args: string[]): Promise<{ token: string; user_id: string; expires_at: string }> {
  const r = await runEstate(['token', 'create', '--data-dir', dir, '--json', ...args]);
  assert.equal(r.code, 0, r.stderr);
  return r.json;
}

test('estate token create prints a signed JWT; the secret file is created with mode 0600', async (t) => {
  const dir = await tempDataDir(t);
  const before = Date.now();
  const issued = await cliToken(dir, '--user', 'alice');
  assert.deepEqual(Object.keys(issued).sort(), ['expires_at', 'token', 'user_id']);
  assert.equal(issued.user_id, 'alice');
  const expires = Date.parse(issued.expires_at);
  assert.ok(expires >= before + HOUR - 1000 && expires <= Date.now() + HOUR + 1000, 'the default ttl is 1h');
  const [header, payload] = issued.token.split('.').slice(0, 2).map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()));
  assert.deepEqual(header, { alg: 'HS256', typ: 'JWT' });
  assert.equal(payload.sub, 'alice');
  assert.equal(payload.iss, 'estate');
  assert.equal(payload.scope, 'read write');
  assert.equal(payload.exp * 1000, expires);
  assert.equal(typeof payload.jti, 'string');
  assert.equal(typeof payload.iat, 'number');

  const secretFile = path.join(dir, TOKEN_SECRET_FILE);
  assert.equal(statSync(secretFile).mode & 0o777, 0o600);
  assert.match(readFileSync(secretFile, 'utf8'), /^[0-9a-f]{64}\n$/);

  const plain = await runEstate(['token', 'create', '--data-dir', dir, '--user', 'bob', '--ttl', '15m', '--scope', 'read']);
  assert.equal(plain.code, 0, plain.stderr);
  assert.match(plain.stdout, /^[\w-]+\.[\w-]+\.[\w-]+\n$/, 'stdout is the token alone, for $(…)');
  assert.match(plain.stderr, /bob \(read\) expires at/);

  const server = await startServer(t, dir);
  for (const headers of [bearer(issued.token), { 'X-API-Key': issued.token }]) {
    assert.equal((await server.get('/trends', headers)).status, 200);
  }
  const started = await server.request('POST', '/training/start', { headers: bearer(issued.token), body: {} });
  assert.equal(started.status, 201);
  assert.equal(started.json.user_id, 'alice', 'the token decides the user');
});

test('invalid tokens get 403: expired, tampered, wrongly signed, alg none, other algorithms, missing claims', async (t) => {
  const dir = await tempDataDir(t);
  const good = await createToken(dir, { userId: 'alice', ttlMs: HOUR });
  const secret = await ensureTokenSecret(dir);
  const expired = await createToken(dir, { userId: 'alice', ttlMs: HOUR, now: new Date(Date.now() - 2 * HOUR) });
  const [h, p, s] = good.token.split('.') as [string, string, string];
  const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
  const sign = (alg: string, body: Record<string, unknown>, key: Uint8Array = secret) => new SignJWT(body).setProtectedHeader({ alg }).sign(key);
  const cases: [string, string][] = [
    ['expired', expired.token],
    ['payload changed to another user', `${h}.${b64({ ...claims, sub: 'bob' })}.${s}`],
    ['payload with a later expiry', `${h}.${b64({ ...claims, exp: (claims.exp as number) + 86_400 })}.${s}`],
    ['signature changed', `${h}.${p}.${s.slice(0, -2)}${s.endsWith('AA') ? 'BB' : 'AA'}`],
    ['signature removed', `${h}.${p}.`],
    ['alg none', `${b64({ alg: 'none', typ: 'JWT' })}.${p}.`],
    ['header swapped to none, signature kept', `${b64({ alg: 'none' })}.${p}.${s}`],
    ['signed by another secret', await sign('HS256', claims, randomBytes(32))],
    ['HS512 with the right secret', await sign('HS512', claims)],
    ['no exp', await sign('HS256', { ...claims, exp: undefined })],
    ['another issuer', await sign('HS256', { ...claims, iss: 'elsewhere' })],
    ['unknown scope', await sign('HS256', { ...claims, scope: 'read admin' })],
    ['user that is not a valid id', await sign('HS256', { ...claims, sub: '../bob' })],
    ['truncated', good.token.slice(0, -10)],
    ['garbage with dots', 'a.b.c'],
  ];
  const server = await startServer(t, dir);
  assert.equal((await server.get('/trends', bearer(good.token))).status, 200, 'the untampered token works');
  for (const [name, token] of cases) {
    await t.test(name, async () => {
      const r = await server.get('/trends', bearer(token));
      assert.equal(r.status, 403);
      assert.equal(r.json.detail, 'Invalid credential');
      assert.equal((await server.get('/training/runs', bearer(token))).status, 403, 'an invalid credential is refused on user routes too');
    });
  }
});

test('a token expires on its own, and deleting the secret ends every token without a restart', async (t) => {
  const dir = await tempDataDir(t);
  let offsetMs = 0;
  const server = await startServer(t, dir, { now: () => new Date(Date.now() + offsetMs) });
  const { token } = await cliToken(dir, '--user', 'alice', '--ttl', '1h');
  await waitUntil('the token is accepted', async () => (await server.get('/trends', bearer(token))).status === 200);
  offsetMs = HOUR + 1000;
  assert.equal((await server.get('/trends', bearer(token))).status, 403, 'expired');
  offsetMs = 0;
  assert.equal((await server.get('/trends', bearer(token))).status, 200);

  await unlink(path.join(dir, TOKEN_SECRET_FILE));
  await waitUntil('the token dies with its secret', async () => (await server.get('/trends', bearer(token))).status === 403);
  const fresh = await cliToken(dir, '--user', 'alice');
  await waitUntil('a token signed by the new secret works', async () => (await server.get('/trends', bearer(fresh.token))).status === 200);
  assert.equal((await server.get('/trends', bearer(token))).status, 403, 'the old token stays dead');
});

test('scopes: a read token cannot write, a write token can', async (t) => {
  const dir = await tempDataDir(t);
  const read = await cliToken(dir, '--user', 'alice', '--scope', 'read');
  const write = await cliToken(dir, '--user', 'alice', '--scope', 'write');
  const server = await startServer(t, dir);
  const denied = await server.request('POST', '/training/start', { headers: bearer(read.token), body: {} });
  assert.equal(denied.status, 403);
  assert.match(denied.json.detail, /"write" scope/);
  assert.equal((await server.request('POST', '/training/start', { headers: bearer(write.token), body: {} })).status, 201);
  assert.equal((await server.get('/trends', bearer(read.token))).status, 200);
  assert.equal((await server.get('/trends', bearer(write.token))).status, 403, 'a write-only token cannot read');
});

test('the token secret is created once even when many processes race for it', async (t) => {
  const dir = await tempDataDir(t);
  const [inProcess, clis] = await Promise.all([
    Promise.all(Array.from({ length: 8 }, () => ensureTokenSecret(dir))),
    Promise.all(Array.from({ length: 4 }, () => cliToken(dir, '--user', 'alice'))),
  ]);
  const secret = readTokenSecret(dir) ?? assert.fail('no secret');
  for (const s of inProcess) assert.deepEqual(Buffer.from(s), Buffer.from(secret));
  const server = await startServer(t, dir);
  for (const { token } of clis) assert.equal((await server.get('/trends', bearer(token))).status, 200);
  const leftovers = readdirSync(dir).filter((f) => f.startsWith(TOKEN_SECRET_FILE));
  assert.deepEqual(leftovers, [TOKEN_SECRET_FILE], 'no temp files are left behind');
});

test('estate token create refuses bad values with exit 2 and one line', async (t) => {
  const dir = await tempDataDir(t);
  const cases: [string, string[], RegExp][] = [
    ['no user', [], /--user/],
    ['zero ttl', ['--user', 'a', '--ttl', '0s'], /--ttl/],
    ['ttl over 30 days', ['--user', 'a', '--ttl', '31d'], /--ttl "31d": at most 30d/],
    ['ttl without unit', ['--user', 'a', '--ttl', '60'], /--ttl/],
    ['ttl in weeks', ['--user', 'a', '--ttl', '1w'], /--ttl/],
    ['unknown scope', ['--user', 'a', '--scope', 'root'], /--scope/],
    ['the ingest scope, which only a key bound to a node has', ['--user', 'a', '--scope', 'ingest'], /invalid --scope "ingest": use read, write/],
    ['bad user', ['--user', 'a b'], /invalid user/],
  ];
  for (const [name, args, message] of cases) {
    await t.test(name, async () => {
      const r = await runEstate(['token', 'create', '--data-dir', dir, ...args]);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, message);
    });
  }
});
