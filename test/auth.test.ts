import assert from 'node:assert/strict';
import { test } from 'node:test';
import { operations } from '../src/api/operations/index.ts';
import { createKey } from '../src/core/keys/key-store.ts';
import { createToken } from '../src/core/keys/tokens.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { startServer } from './helpers/server.ts';

/** A concrete path for an operation: every `{param}` filled with a plausible value (auth runs before validation anyway). */
function samplePath(path: string): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => (name === 'run_id' ? 'run_0000000000000000' : 'x'));
}

const writes = operations.filter((op) => op.method !== 'GET');
const protectedReads = operations.filter((op) => op.method === 'GET' && op.access === 'protected');

test('every operation needs `read` for GET and `write` for POST and DELETE, but POST /ingest `ingest` (which `write` opens too)', () => {
  for (const op of operations) assert.equal(op.scope, op.path === '/ingest' ? 'ingest' : op.method === 'GET' ? 'read' : 'write', op.id);
  assert.ok(writes.some((op) => op.path === '/training/start'));
});

test('a read key gets 403 on every write route; a write-only key gets 403 on every protected read; an ingest key on every route but POST /ingest', async (t) => {
  const dir = await tempDataDir(t);
  const read = (await createKey(dir, { userId: 'alice', scopes: ['read'] })).key;
  const write = (await createKey(dir, { userId: 'alice', scopes: ['write'] })).key;
  const ingest = (await createKey(dir, { userId: 'web-1', scopes: ['ingest'], node: 'web-1' })).key;
  const server = await startServer(t, dir);
  for (const op of writes) {
    await t.test(`${op.method} ${op.path} with a read key`, async () => {
      const r = await server.request(op.method, samplePath(op.path), { headers: { 'X-API-Key': read }, body: {} });
      assert.equal(r.status, 403);
      const or = op.scope === 'ingest' ? ' (or "write")' : '';
      assert.equal(r.json.detail, `This credential lacks the "${op.scope}" scope${or} that ${op.method} ${op.path} needs`);
    });
  }
  for (const op of [...writes, ...protectedReads].filter((o) => o.path !== '/ingest')) {
    await t.test(`${op.method} ${op.path} with an ingest key`, async () => {
      const r = await server.request(op.method, samplePath(op.path), { headers: { 'X-API-Key': ingest }, ...(op.method === 'GET' ? {} : { body: {} }) });
      assert.equal(r.status, 403);
      assert.match(r.json.detail, new RegExp(`lacks the "${op.scope}" scope`));
    });
  }
  const ingested = await server.request('POST', '/ingest', { headers: { 'X-API-Key': ingest }, body: {} });
  assert.equal(ingested.status, 422, 'an ingest key is let through to POST /ingest, whose body it then reads');
  for (const op of protectedReads) {
    await t.test(`GET ${op.path} with a write-only key`, async () => {
      const r = await server.get(samplePath(op.path), { 'X-API-Key': write });
      assert.equal(r.status, 403);
      assert.match(r.json.detail, /"read" scope/);
    });
  }
});

test('a write key can write; ESTATE_API_KEY is user operator with both scopes', async (t) => {
  const dir = await tempDataDir(t);
  const write = (await createKey(dir, { userId: 'cron', scopes: ['write'] })).key;
  const server = await startServer(t, dir, { envApiKey: 'env-operator-secret' });
  const started = await server.request('POST', '/training/start', { headers: { 'X-API-Key': write }, body: { name: 'w' } });
  assert.equal(started.status, 201);
  assert.equal(started.json.user_id, 'cron');
  assert.equal((await server.request('DELETE', `/training/runs/${started.json.run_id}`, { headers: { 'X-API-Key': write } })).status, 204);

  const env = { Authorization: 'Bearer env-operator-secret' };
  const byOperator = await server.request('POST', '/training/start', { headers: env, body: {} });
  assert.equal(byOperator.status, 201);
  assert.equal(byOperator.json.user_id, 'operator');
  assert.equal((await server.get('/trends', env)).status, 200);
  assert.deepEqual((await server.get('/training/runs', env)).json.map((r: { run_id: string }) => r.run_id), [byOperator.json.run_id]);
});

test('public routes ignore credentials, valid or not', async (t) => {
  const dir = await tempDataDir(t);
  const server = await startServer(t, dir);
  const publicGets = operations.filter((op) => op.access === 'public' && op.method === 'GET' && !op.path.includes('{'));
  assert.ok(publicGets.length > 0);
  for (const op of publicGets) {
    const carriers: Record<string, string>[] = [{ 'X-API-Key': 'nonsense' }, { Authorization: 'Bearer a.b.c' }];
    for (const headers of carriers) {
      assert.equal((await server.get(op.path, headers)).status, 200, `${op.path} ${JSON.stringify(headers)}`);
    }
  }
});

test('a failed credential is logged as one warn line without the secret', async (t) => {
  const dir = await tempDataDir(t);
  const lines: Record<string, unknown>[] = [];
  // Access lines (one per request) are another test's business.
  const server = await startServer(t, dir, { log: (line) => line.event !== 'request' && lines.push(line) });
  const revoked = await createKey(dir, { userId: 'alice' });
  const expired = (await createToken(dir, { userId: 'alice', ttlMs: 60_000, now: new Date(Date.now() - 3_600_000) })).token;
  const wrongKey = `est_${revoked.info.key_id}_${'A'.repeat(32)}`;
  const cases: [string, string, Record<string, string>, string, Record<string, unknown>][] = [
    ['a wrong key in X-API-Key', '/trends', { 'X-API-Key': wrongKey }, wrongKey, { carrier: 'x-api-key', key_id: revoked.info.key_id, path: '/trends' }],
    ['an expired token as bearer', '/training/runs', { Authorization: `Bearer ${expired}` }, expired, { carrier: 'bearer', key_id: undefined, path: '/training/runs' }],
    ['a secret in the query', `/events?limit=5&api_key=${encodeURIComponent('hunter2-secret')}`, {}, 'hunter2-secret', { carrier: 'query', key_id: undefined, path: '/events' }],
  ];
  for (const [name, route, headers, secret, expected] of cases) {
    await t.test(name, async () => {
      lines.length = 0;
      assert.equal((await server.get(route, headers)).status, 403);
      assert.equal(lines.length, 1);
      const line = lines[0] as Record<string, unknown>;
      assert.deepEqual({ level: line.level, event: line.event, carrier: line.carrier, key_id: line.key_id, path: line.path }, { level: 'warn', event: 'auth_failed', ...expected });
      assert.ok(!JSON.stringify(line).includes(secret), 'the secret is not logged');
    });
  }
  lines.length = 0;
  await server.get('/trends');
  await server.get('/healthz', { 'X-API-Key': 'nonsense' });
  assert.deepEqual(lines, [], 'a missing credential, or one on a public route, is not a failed credential');
});
