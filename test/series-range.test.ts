import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';

// The range routes of DESIGN.md 7b on the data dir, over HTTP and through the
// CLI: the bucket math against a hand-computed series, the filters, and the 422s.

/** A minute-aligned time two days ago (inside every rollup retention). */
const BASE = Math.floor((Date.now() - 2 * 86_400_000) / 3_600_000) * 3_600_000;
const at = (s: number) => new Date(BASE + s * 1000).toISOString();
const lines = (records: object[]) => records.map((r) => JSON.stringify(r)).join('\n') + '\n';

const TRENDS = [
  { ts: at(-1), node: 'a', cpu_pct: 99 }, // before the range
  { ts: at(0), node: 'a', cpu_pct: 1 },
  { ts: at(20), node: 'a', cpu_pct: 2, mem_scope: 'host' },
  { ts: at(30), node: 'b', cpu_pct: 100, mem_used_pct: 50 },
  { ts: at(40), node: 'a', cpu_pct: 6 },
  { ts: at(70), node: 'a', cpu_pct: 10 },
  { ts: 'not a time', node: 'a', cpu_pct: 1000 },
  { ts: at(200), node: 'a', cpu_pct: 4, up: true },
  { ts: at(240), node: 'a', cpu_pct: 77 }, // `to` is exclusive
];

const RANGE = `from=${encodeURIComponent(at(0))}&to=${encodeURIComponent(at(240))}&points=4`;

const item = (s: number, count: number, stats: Record<string, [number, number, number]>) => ({
  ts: at(s),
  count,
  min: Object.fromEntries(Object.entries(stats).map(([f, v]) => [f, v[0]])),
  mean: Object.fromEntries(Object.entries(stats).map(([f, v]) => [f, v[1]])),
  max: Object.fromEntries(Object.entries(stats).map(([f, v]) => [f, v[2]])),
});

const CASES: { name: string; query: string; cli: string[]; items: ReturnType<typeof item>[] }[] = [
  {
    name: 'one node: min, mean, max and count per bucket, the empty bucket left out',
    query: `${RANGE}&node=a`,
    cli: ['--node', 'a'],
    items: [item(0, 3, { cpu_pct: [1, 3, 6] }), item(60, 1, { cpu_pct: [10, 10, 10] }), item(180, 1, { cpu_pct: [4, 4, 4] })],
  },
  {
    name: 'every node together; a field only some samples hold is summed over those',
    query: RANGE,
    cli: [],
    items: [item(0, 4, { cpu_pct: [1, 27.25, 100], mem_used_pct: [50, 50, 50] }), item(60, 1, { cpu_pct: [10, 10, 10] }), item(180, 1, { cpu_pct: [4, 4, 4] })],
  },
  {
    name: 'only the fields asked for; a field the range does not hold is absent',
    query: `${RANGE}&fields=mem_used_pct,nowhere`,
    cli: ['--fields', 'mem_used_pct,nowhere'],
    items: [item(0, 4, { mem_used_pct: [50, 50, 50] }), item(60, 1, {}), item(180, 1, {})],
  },
];

test('GET /trends/range: buckets exact against a hand-computed series, over HTTP and the CLI alike', async (t) => {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'trends.jsonl'), lines(TRENDS));
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  for (const c of CASES) {
    await t.test(c.name, async () => {
      const r = await server.get(`/trends/range?${c.query}`, { 'X-API-Key': key });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json, { from: new Date(BASE).toISOString(), to: at(240), step_s: 60, tier: 'raw', items: c.items });
      const cli = await runEstate(['trends', 'range', '--data-dir', dir, '--from', at(0), '--to', at(240), '--points', '4', ...c.cli, '--json']);
      assert.equal(cli.code, 0, cli.stderr);
      assert.deepEqual(cli.json, r.json);
    });
  }
});

test('GET /trends/range: the step is the smallest nice one whose grid fits in points; defaults are the last 24 hours', async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const cases: [string, number][] = [
    [`from=${encodeURIComponent(at(0))}&to=${encodeURIComponent(at(3600))}&points=60`, 60],
    // An unaligned start needs one bucket more than the range divided by the step: the next nice step.
    [`from=${encodeURIComponent(at(30))}&to=${encodeURIComponent(at(3630))}&points=60`, 120],
    [`from=${encodeURIComponent(at(0))}&to=${encodeURIComponent(at(86_400))}`, 300],
    ['from=30d&points=720', 7200],
    ['from=30d&points=721', 3600],
    ['from=30d', 10800],
    ['from=7d&to=1d&points=2000', 300],
  ];
  for (const [query, step] of cases) {
    const r = await server.get(`/trends/range?${query}`, { 'X-API-Key': key });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.step_s, step, query);
    assert.deepEqual(r.json.items, []);
  }
  const r = await server.get('/trends/range', { 'X-API-Key': key });
  assert.equal(Date.parse(r.json.to) - Date.parse(r.json.from), 86_400_000);
  assert.ok(Math.abs(Date.parse(r.json.to) - Date.now()) < 600_000);
  assert.equal(r.json.step_s, 300);
  assert.equal((await server.get('/trends/range')).status, 403);
});

test('GET /trends/range and /disk/range: bad input is 422 at its loc, exit 2 from the CLI', async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const cases: [string, string, string][] = [
    [`from=${encodeURIComponent(at(60))}&to=${encodeURIComponent(at(0))}`, 'from', 'value_error'],
    ['from=1h&to=2h', 'from', 'value_error'],
    ['points=0', 'points', 'greater_than_equal'],
    ['points=2001', 'points', 'less_than_equal'],
    ['points=many', 'points', 'int_parsing'],
    ['fields=cpu-pct', 'fields', 'string_pattern_mismatch'],
    ['fields=cpu_pct,', 'fields', 'string_pattern_mismatch'],
    ['from=yesterday', 'from', 'string_pattern_mismatch'],
    ['to=2026-02-30T00:00:00Z', 'to', 'datetime_from_date_parsing'],
  ];
  for (const route of ['/trends/range', '/disk/range']) {
    for (const [query, loc, type] of cases) {
      const r = await server.get(`${route}?${query}`, { 'X-API-Key': key });
      assert.equal(r.status, 422, `${route}?${query}`);
      assert.deepEqual(r.json.detail.map((d: { loc: unknown }) => d.loc), [['query', loc]], query);
      assert.equal(r.json.detail[0].type, type, query);
    }
  }
  const cli = await runEstate(['trends', 'range', '--data-dir', dir, '--from', '1h', '--to', '2h']);
  assert.equal(cli.code, 2);
  assert.match(cli.stderr, /from must not be after to/);
  assert.equal((await runEstate(['disk', 'range', '--data-dir', dir, '--fields', 'a b'])).code, 2);
});

test('GET /disk/range: per mount, per node and mount, every mount together', async (t) => {
  const dir = await tempDataDir(t);
  const snap = (s: number, node: string, mount: string, used: number) => ({ ts: at(s), node, mount, fs_type: 'ext4', total_bytes: 1000, used_bytes: used, free_bytes: 1000 - used });
  await writeFile(
    path.join(dir, 'disk.jsonl'),
    lines([snap(0, 'a', '/', 100), snap(0, 'a', '/srv', 500), snap(10, 'b', '/', 300), snap(70, 'a', '/', 200), { ts: at(80), node: 'a', mount: '/', used_bytes: 'lots' }]),
  );
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const range = `from=${encodeURIComponent(at(0))}&to=${encodeURIComponent(at(120))}&points=2&fields=used_bytes`;
  const cases: [string, string[], ReturnType<typeof item>[]][] = [
    ['&mount=%2F', ['--mount', '/'], [item(0, 2, { used_bytes: [100, 200, 300] }), item(60, 1, { used_bytes: [200, 200, 200] })]],
    ['&mount=%2F&node=a', ['--mount', '/', '--node', 'a'], [item(0, 1, { used_bytes: [100, 100, 100] }), item(60, 1, { used_bytes: [200, 200, 200] })]],
    ['&node=a', ['--node', 'a'], [item(0, 2, { used_bytes: [100, 300, 500] }), item(60, 1, { used_bytes: [200, 200, 200] })]],
    ['', [], [item(0, 3, { used_bytes: [100, 300, 500] }), item(60, 1, { used_bytes: [200, 200, 200] })]],
  ];
  for (const [query, args, items] of cases) {
    const r = await server.get(`/disk/range?${range}${query}`, { 'X-API-Key': key });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.items, items, query);
    const cli = await runEstate(['disk', 'range', '--data-dir', dir, '--from', at(0), '--to', at(120), '--points', '2', '--fields', 'used_bytes', ...args, '--json']);
    assert.equal(cli.code, 0, cli.stderr);
    assert.deepEqual(cli.json.items, items, args.join(' '));
  }
});

test('estate trends range prints a table of the buckets when piped', async (t) => {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'trends.jsonl'), lines(TRENDS));
  const cli = await runEstate(['trends', 'range', '--data-dir', dir, '--from', at(0), '--to', at(240), '--points', '4', '--node', 'a', '--fields', 'cpu_pct']);
  assert.equal(cli.code, 0, cli.stderr);
  const rows = cli.stdout.trim().split('\n');
  assert.deepEqual(rows[0]?.split('\t'), ['ts', 'count', 'mean', 'min', 'max']);
  assert.equal(rows.length, 4);
  assert.equal(rows[1]?.split('\t')[1], '3');
});
