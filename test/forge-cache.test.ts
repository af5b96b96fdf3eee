import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TtlCache } from '../src/core/ttl-cache.ts';

/** A load that counts its calls and resolves (or rejects) when told. */
function deferredLoads<T>() {
  const pending: { resolve: (v: T) => void; reject: (e: Error) => void }[] = [];
  const load = () => new Promise<T>((resolve, reject) => pending.push({ resolve, reject }));
  return { load, pending };
}

test('TtlCache shares one in-flight load between concurrent calls, success or failure', async () => {
  const cache = new TtlCache<number>({ ttlMs: 0 });
  const { load, pending } = deferredLoads<number>();
  const a = cache.get('k', load);
  const b = cache.get('k', load);
  const other = cache.get('other', load);
  assert.equal(pending.length, 2, 'one load per key');
  pending[0]?.resolve(1);
  pending[1]?.resolve(2);
  assert.deepEqual(await Promise.all([a, b, other]), [1, 1, 2]);

  const c = cache.get('k', load);
  const d = cache.get('k', load);
  assert.equal(pending.length, 3, 'ttl 0 keeps nothing: a new load');
  pending[2]?.reject(new Error('down'));
  await assert.rejects(c, /down/);
  await assert.rejects(d, /down/);
  const e = cache.get('k', load);
  assert.equal(pending.length, 4, 'a failure is not kept');
  pending[3]?.resolve(4);
  assert.equal(await e, 4);
});

test('TtlCache keeps a value for ttlMs, then loads again', async (t) => {
  let now = 1000;
  const cache = new TtlCache<string>({ ttlMs: 500, now: () => now });
  let loads = 0;
  const load = async () => `v${++loads}`;
  const cases: [number, string][] = [
    [1000, 'v1'],
    [1499, 'v1'],
    [1500, 'v2'],
    [1999, 'v2'],
    [2000, 'v3'],
  ];
  for (const [at, expected] of cases) {
    await t.test(`at ${at}`, async () => {
      now = at;
      assert.equal(await cache.get('k', load), expected);
    });
  }
  cache.clear();
  assert.equal(await cache.get('k', load), 'v4');
});

test('TtlCache keeps at most maxEntries values, dropping the oldest', async () => {
  const cache = new TtlCache<string>({ ttlMs: 60_000, maxEntries: 2 });
  let loads = 0;
  const load = async () => `v${++loads}`;
  await cache.get('a', load);
  await cache.get('b', load);
  await cache.get('c', load);
  assert.equal(await cache.get('b', load), 'v2');
  assert.equal(await cache.get('c', load), 'v3');
  assert.equal(await cache.get('a', load), 'v4', 'a was dropped');
});
