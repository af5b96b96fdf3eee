import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import { mock, test } from 'node:test';
import { type KeyRecord, matchKey, secretMatcher, secretsEqual } from '../src/core/keys/key-store.ts';

// Secrets are compared in constant time: every check of a presented API key
// ends in one crypto.timingSafeEqual over fixed-length hashes, whether the
// key id exists or not, so neither the secret nor the existence of a key id
// leaks through how long a refusal takes.

test('every key check is one timingSafeEqual of two 32-byte hashes, known key id or not', (t) => {
  const calls: [number, number][] = [];
  const real = crypto.timingSafeEqual;
  mock.method(crypto, 'timingSafeEqual', (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
    calls.push([a.byteLength, b.byteLength]);
    return real(a, b);
  });
  syncBuiltinESMExports();
  t.after(() => {
    mock.restoreAll();
    syncBuiltinESMExports();
  });
  const key = `est_0123456789ab_${'A'.repeat(32)}`;
  const record = {
    key_id: '0123456789ab',
    user_id: 'alice',
    hash: `sha256:${crypto.createHash('sha256').update(key).digest('hex')}`,
    scopes: ['read'],
    created_at: '2026-01-01T00:00:00Z',
  } as unknown as KeyRecord;
  const cases: [string, () => unknown, unknown][] = [
    ['the right key', () => matchKey([record], key, new Date()) === record, true],
    ['a wrong secret of a known key id', () => matchKey([record], `est_0123456789ab_${'B'.repeat(32)}`, new Date()), undefined],
    ['an unknown key id', () => matchKey([record], `est_ffffffffffff_${'A'.repeat(32)}`, new Date()), undefined],
    ['no key shape at all', () => matchKey([record], 'nonsense', new Date()), undefined],
    ['ESTATE_API_KEY, equal', () => secretsEqual('env-secret', 'env-secret'), true],
    ['ESTATE_API_KEY, another length', () => secretsEqual('env-secret-longer', 'env-secret'), false],
    ['ESTATE_API_KEY hashed once (the server\'s check), equal', () => secretMatcher('env-secret')('env-secret'), true],
    ['ESTATE_API_KEY hashed once, another length', () => secretMatcher('env-secret')('env-secret-longer'), false],
  ];
  for (const [name, check, expected] of cases) {
    calls.length = 0;
    assert.equal(check(), expected, name);
    assert.deepEqual(calls, [[32, 32]], `${name}: one constant-time compare of two hashes`);
  }
});
