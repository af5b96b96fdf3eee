import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { rateLimitSchema } from '../src/config.ts';
import { addressKey, isLoopback, RateLimiter } from '../src/server/rate-limit.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';

function limiter(settings: Record<string, unknown>, maxBuckets?: number) {
  let now = 0;
  const limit = new RateLimiter(rateLimitSchema().parse(settings), { now: () => now, maxBuckets });
  return { limit, advance: (ms: number) => (now += ms) };
}

test('a bucket holds `burst` requests and refills at requests_per_minute; the wait is rounded up to whole seconds', () => {
  const { limit, advance } = limiter({ requests_per_minute: 30, burst: 3 });
  assert.deepEqual([limit.take('a'), limit.take('a'), limit.take('a')], [undefined, undefined, undefined]);
  assert.equal(limit.take('a'), 2, 'one request every 2 s');
  assert.equal(limit.take('b'), undefined, 'another key has its own bucket');
  advance(1000);
  assert.equal(limit.take('a'), 1, 'half a token after 1 s: wait one more second');
  advance(1000);
  assert.equal(limit.take('a'), undefined, 'a whole token after 2 s');
  advance(60_000);
  assert.deepEqual([limit.take('a'), limit.take('a'), limit.take('a'), limit.take('a')], [undefined, undefined, undefined, 2], 'never more than burst');
});

test('an answer costs one token per bytes_per_token bytes or part of them; the debt stops at -burst', () => {
  const { limit, advance } = limiter({ requests_per_minute: 60, burst: 20, bytes_per_token: 65_536 });
  assert.equal(limit.take('a'), undefined);
  limit.chargeAnswer('a', 65_536);
  assert.equal(limit.take('a'), undefined, 'an answer of 64 KiB cost only the request');
  limit.chargeAnswer('a', 1024 * 1024);
  // 20 - 2 requests - 15 more for the 1 MiB answer: 3 left.
  assert.deepEqual([limit.take('a'), limit.take('a'), limit.take('a'), limit.take('a')], [undefined, undefined, undefined, 1]);
  limit.chargeAnswer('a', 100 * 1024 * 1024);
  assert.equal(limit.take('a'), 21, 'from -20 tokens, one a second: 21 s until one is whole');
  advance(21_000);
  assert.equal(limit.take('a'), undefined);
  limit.chargeAnswer(undefined, 1024 * 1024);
  assert.equal(limit.take('b'), undefined, 'another key is not charged');
});

test('memory is bounded: refilled buckets go first, then the least recently used', () => {
  const { limit, advance } = limiter({ requests_per_minute: 60, burst: 2 }, 100);
  for (let i = 0; i < 5000; i++) limit.take(`spray-${i}`);
  assert.ok(limit.size <= 100, `${limit.size} buckets kept under a spray of new keys`);
  advance(60_000);
  for (let i = 0; i < 99; i++) limit.take(`idle-${i}`);
  limit.take('busy');
  limit.take('busy');
  advance(1000);
  // Now every bucket but busy's has refilled (busy has 1 of 2): one more key makes room by dropping those.
  limit.take('newcomer');
  assert.equal(limit.size, 2, 'only busy and the newcomer are kept');
  assert.deepEqual([limit.take('busy'), limit.take('busy')], [undefined, 1], 'busy kept its level (a new bucket would allow both)');
});

test('client addresses: loopback is recognised; IPv6 clients share a bucket per /64', () => {
  const loopback: [string, boolean][] = [
    ['127.0.0.1', true],
    ['127.5.6.7', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['10.0.0.1', false],
    ['::ffff:10.0.0.1', false],
    ['2001:db8::1', false],
    ['', false],
  ];
  for (const [address, expected] of loopback) assert.equal(isLoopback(address), expected, address);
  const keys: [string, string][] = [
    ['10.1.2.3', '10.1.2.3'],
    ['::ffff:10.1.2.3', '10.1.2.3'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::9', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002:ffff::1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['fe80::1', 'fe80:0:0:0::/64'],
  ];
  for (const [address, key] of keys) assert.equal(addressKey(address), key, address);
});

async function limitedServer(t: Parameters<typeof tempDataDir>[0], rateLimit: Record<string, unknown>) {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ serve: { rate_limit: rateLimit } }));
  const server = await startServer(t, dir);
  return { dir, server };
}

test('over the limit: 429 with Retry-After and the usual error body; per credential when one is valid, else per address', async (t) => {
  // The test client is on loopback: the exemption is turned off to see the limit.
  const { dir, server } = await limitedServer(t, { requests_per_minute: 1, burst: 3, exempt_loopback: false });
  const [alice, bob] = [await newKey(dir, 'alice'), await newKey(dir, 'bob')];
  const statuses = async (n: number, route: string, headers: Record<string, string> = {}) => {
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push((await server.get(route, headers)).status);
    return out;
  };
  assert.deepEqual(await statuses(4, '/'), [200, 200, 200, 429], 'anonymous: the address bucket');
  const limited = await server.get('/nope');
  assert.equal(limited.status, 429, 'unknown paths cost the address too');
  assert.match(limited.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
  assert.deepEqual(limited.json, { detail: limited.json.detail });
  assert.match(limited.json.detail, /too many requests/);
  assert.match(limited.headers.get('x-request-id') ?? '', /\S/);
  assert.equal(limited.headers.get('x-content-type-options'), 'nosniff');

  assert.deepEqual(await statuses(4, '/trends', { 'X-API-Key': alice }), [200, 200, 200, 429], 'alice: her own bucket');
  assert.deepEqual(await statuses(2, '/trends', { Authorization: `Bearer ${bob}` }), [200, 200], 'bob: his own bucket');
  assert.equal((await server.get('/trends', { 'X-API-Key': 'est_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' })).status, 429, 'a wrong key costs the exhausted address: guessing is limited');
  assert.deepEqual(await statuses(5, '/healthz'), [200, 200, 200, 200, 200], '/healthz is never limited');
});

test('loopback clients are exempt by default, and enabled: false turns the limit off', async (t) => {
  for (const settings of [{ requests_per_minute: 1, burst: 1 }, { requests_per_minute: 1, burst: 1, exempt_loopback: false, enabled: false }]) {
    await t.test(JSON.stringify(settings), async () => {
      const { server } = await limitedServer(t, settings);
      const statuses = await Promise.all(Array.from({ length: 20 }, () => server.get('/').then((r) => r.status)));
      assert.deepEqual(new Set(statuses), new Set([200]));
    });
  }
});
