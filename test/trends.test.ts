import assert from 'node:assert/strict';
import { appendFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';

function points(n: number): string {
  const start = Date.parse('2026-11-01T00:00:00Z');
  return Array.from({ length: n }, (_, i) => JSON.stringify({ ts: new Date(start + i * 60_000).toISOString(), seq: i })).join('\n') + '\n';
}

test('GET /trends returns the newest points first, limited', async (t) => {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'trends.jsonl'), points(1500));
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const cases: [string, number, number][] = [
    ['/trends', 100, 1499],
    ['/trends?limit=1', 1, 1499],
    ['/trends?limit=1000', 1000, 1499],
  ];
  for (const [route, count, firstSeq] of cases) {
    await t.test(route, async () => {
      const r = await server.get(route, { 'X-API-Key': key });
      assert.equal(r.status, 200);
      assert.equal(r.json.count, count);
      assert.equal(r.json.items.length, count);
      assert.equal(r.json.items[0].seq, firstSeq);
      assert.equal(r.json.items.at(-1).seq, firstSeq - count + 1);
      assert.equal(r.json.skipped_lines, 0);
    });
  }
});

test('GET /trends limit out of bounds or not an integer is 422 at ["query","limit"]', async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const cases: [string, string][] = [
    ['1001', 'less_than_equal'],
    ['0', 'greater_than_equal'],
    ['-5', 'greater_than_equal'],
    ['abc', 'int_parsing'],
    ['1.5', 'int_parsing'],
    ['', 'int_parsing'],
  ];
  for (const [value, type] of cases) {
    await t.test(`limit=${value}`, async () => {
      const r = await server.get(`/trends?limit=${encodeURIComponent(value)}`, { 'X-API-Key': key });
      assert.equal(r.status, 422);
      assert.deepEqual(r.json.detail.map((d: { loc: unknown }) => d.loc), [['query', 'limit']]);
      assert.equal(r.json.detail[0].type, type);
      assert.equal(typeof r.json.detail[0].msg, 'string');
    });
  }
});

test('a corrupt line and a torn last line are skipped and counted, never a 500', async (t) => {
  const dir = await tempDataDir(t);
  const file = path.join(dir, 'trends.jsonl');
  await writeFile(file, points(5));
  await appendFile(file, 'not json at all\n[1,2,3]\n');
  await appendFile(file, points(2).replace(/"seq":\d+/g, '"seq":"late"'));
  await appendFile(file, '{"ts":"2026-11-02T00:00:00Z","se');
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const r = await server.get('/trends?limit=4', { 'X-API-Key': key });
  assert.equal(r.status, 200);
  assert.deepEqual(r.json.items.map((i: { seq: unknown }) => i.seq), ['late', 'late', 4, 3]);
  assert.equal(r.json.skipped_lines, 3);
  const latest = await server.get('/trends/latest', { 'X-API-Key': key });
  assert.equal(latest.status, 200);
  assert.equal(latest.json.seq, 'late');
});

test('a missing log is an empty list, and /trends/latest is 404', async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const r = await server.get('/trends', { 'X-API-Key': key });
  assert.equal(r.status, 200);
  assert.deepEqual(r.json, { items: [], count: 0, limit: 100, skipped_lines: 0 });
  const latest = await server.get('/trends/latest', { 'X-API-Key': key });
  assert.equal(latest.status, 404);
  assert.equal(typeof latest.json.detail, 'string');
});

test('estate trends --limit 5 --json prints the same body as GET /trends?limit=5', async (t) => {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'trends.jsonl'), points(50));
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const [cli, http] = await Promise.all([runEstate(['trends', '--limit', '5', '--json', '--data-dir', dir]), server.get('/trends?limit=5', { 'X-API-Key': key })]);
  assert.equal(cli.code, 0, cli.stderr);
  assert.deepEqual(cli.json, http.json);
  const latest = await runEstate(['trends', 'latest', '--json', '--data-dir', dir]);
  assert.equal(latest.json.seq, 49);
});

test('a stored ts that is not a date-time is answered as stored, never a 500 (trends, disk, pulse)', async (t) => {
  const dir = await tempDataDir(t);
  const odd: unknown[] = ['yesterday', 1732000000, null, { at: 'noon' }];
  const logs: [string, string[], (ts: unknown, i: number) => object][] = [
    ['trends.jsonl', ['/trends', '/trends/latest'], (ts, i) => ({ ts, seq: i })],
    ['disk.jsonl', ['/disk', '/disk/latest'], (ts, i) => ({ ts, mount: '/', total_bytes: 100, used_bytes: i, free_bytes: 100 - i })],
    ['health-pulse.jsonl', ['/health/pulse'], (ts) => ({ ts, status: 'healthy' })],
  ];
  for (const [file, , make] of logs) await writeFile(path.join(dir, file), odd.map((ts, i) => `${JSON.stringify(make(ts, i))}\n`).join(''));
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  for (const [, routes] of logs) {
    for (const route of routes) {
      await t.test(route, async () => {
        const r = await server.get(route, { 'X-API-Key': key });
        assert.equal(r.status, 200, r.text);
        const stored = route.endsWith('/latest') ? [r.json.ts] : r.json.items.map((p: { ts: unknown }) => p.ts);
        assert.deepEqual(stored, route.endsWith('/latest') ? [odd.at(-1)] : [...odd].reverse());
      });
    }
  }
  const cli = await runEstate(['trends', '--data-dir', dir]);
  assert.equal(cli.code, 0, cli.stderr);
  assert.match(cli.stdout, /yesterday/);
});
