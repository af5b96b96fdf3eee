import assert from 'node:assert/strict';
import { appendFile, open, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import type { JsonRecord } from '../src/core/jsonl/parse-record.ts';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';

// ?node= (and ?mount=) on the data dir: the series files are shared with
// other tools, so they hold many nodes' records interleaved, records with no
// `node` at all, and lines that are not records. A read of one node answers
// that node's newest records, newest first, whether the log's index is still
// being built (a first read) or warm, over HTTP and through the CLI alike.

/** One line of a log, and the record it holds (undefined: a line readers skip). */
type Line = { text: string; record?: JsonRecord };

const tsOf = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
const record = (r: JsonRecord): Line => ({ text: JSON.stringify(r), record: r });
const junk = (text: string): Line => ({ text });

/**
 * What a read of the newest `limit` records that `pass` takes answers: those
 * records, newest first, and the lines that are not records after the
 * oldest of them (all of them when the page is not full).
 */
function expected(lines: readonly Line[], limit: number, pass: (r: JsonRecord) => boolean) {
  const items: JsonRecord[] = [];
  let skipped = 0;
  for (let i = lines.length - 1; i >= 0 && items.length < limit; i--) {
    const { record } = lines[i] as Line;
    if (!record) skipped++;
    else if (pass(record)) items.push(record);
  }
  return { items, count: items.length, limit, skipped_lines: skipped };
}

async function writeLog(dir: string, file: string, lines: readonly Line[]): Promise<void> {
  await writeFile(path.join(dir, file), lines.map((l) => `${l.text}\n`).join(''));
}

test('GET /trends?node= over many nodes interleaved, records of other tools and corrupt lines: each node\'s newest, cold and warm; HTTP and CLI agree', async (t) => {
  const dir = await tempDataDir(t);
  const lines: Line[] = [];
  for (let i = 0; i < 1500; i++) {
    lines.push(record({ ts: tsOf(i), node: `n${i % 12}`, cpu_pct: i % 100, seq: i }));
    if (i % 30 === 7) lines.push(record({ ts: tsOf(i), load: 1, tool: 'other' }));
    if (i % 400 === 399) lines.push(junk('{"torn": '));
  }
  lines.push(record({ ts: tsOf(1500), node: 'n3', seq: 1500 }), junk('not json'), record({ ts: tsOf(1501), tool: 'other' }));
  await writeLog(dir, 'trends.jsonl', lines);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const cases: [string, number, string | undefined][] = [
    ['/trends?node=n3&limit=5', 5, 'n3'],
    ['/trends?node=n0&limit=1000', 1000, 'n0'],
    ['/trends?node=n11&limit=1', 1, 'n11'],
    ['/trends?node=nobody', 100, 'nobody'],
    ['/trends?limit=7', 7, undefined],
  ];
  const check = async (when: string) => {
    for (const [route, limit, node] of cases) {
      const r = await server.get(route, { 'X-API-Key': key });
      assert.equal(r.status, 200, `${when} ${route}: ${r.text}`);
      assert.deepEqual(r.json, expected(lines, limit, (rec) => node === undefined || rec.node === node), `${when} ${route}`);
    }
  };
  await check('cold');
  // The index knows the whole file once nodes() answers.
  assert.deepEqual(await server.ctx.store.series.nodes(), Array.from({ length: 12 }, (_, i) => `n${i}`).sort());
  await check('warm');

  // Another writer appends: the next read of a node has it.
  const late = [record({ ts: tsOf(2000), node: 'n3', seq: 2000 }), junk('{'), record({ ts: tsOf(2001), node: 'n4', seq: 2001 })];
  await appendFile(path.join(dir, 'trends.jsonl'), late.map((l) => `${l.text}\n`).join(''));
  lines.push(...late);
  await check('after an append');

  for (const [args, want] of [
    [['trends', '--node', 'n3', '--limit', '5'], expected(lines, 5, (r) => r.node === 'n3')],
    [['trends', 'latest', '--node', 'n7'], expected(lines, 1, (r) => r.node === 'n7').items[0]],
  ] as const) {
    const cli = await runEstate([...args, '--json', '--data-dir', dir]);
    assert.equal(cli.code, 0, cli.stderr);
    assert.deepEqual(cli.json, want, args.join(' '));
  }
  const r = await server.get('/trends/latest?node=n4', { 'X-API-Key': key });
  assert.deepEqual(r.json, { ts: tsOf(2001), node: 'n4', seq: 2001 });
  const none = await runEstate(['trends', 'latest', '--node', 'nobody', '--data-dir', dir]);
  assert.equal(none.code, 3);
  assert.equal(none.stderr, 'estate: no trend data of nobody yet\n');
  const bad = await server.get('/trends?node=', { 'X-API-Key': key });
  assert.equal(bad.status, 422);
  assert.deepEqual(bad.json.detail.map((d: { loc: unknown[] }) => d.loc), [['query', 'node']]);
});

test('GET /disk?node=&mount=: by node, by mount, by both; snapshots of other tools (no node) only in reads without node; bad snapshots skipped and counted', async (t) => {
  const dir = await tempDataDir(t);
  const lines: Line[] = [];
  for (let i = 0; i < 300; i++) {
    for (const node of ['a', 'b', 'c']) {
      for (const mount of node === 'c' ? ['/'] : ['/', '/data']) lines.push(record({ ts: tsOf(i), node, mount, total_bytes: 100, used_bytes: i % 100, free_bytes: 100 - (i % 100) }));
    }
    if (i % 50 === 0) lines.push(record({ ts: tsOf(i), mount: '/data', total_bytes: 1, used_bytes: 0, free_bytes: 1 }));
    if (i % 70 === 0) lines.push(junk(JSON.stringify({ ts: tsOf(i), node: 'a', mount: '/', used_bytes: 'lots' })));
  }
  await writeLog(dir, 'disk.jsonl', lines);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const cases: [string, number, (r: JsonRecord) => boolean][] = [
    ['/disk?node=a&mount=/data&limit=4', 4, (r) => r.node === 'a' && r.mount === '/data'],
    ['/disk?node=c&mount=/data', 100, () => false],
    ['/disk?mount=/data&limit=500', 500, (r) => r.mount === '/data'],
    ['/disk?node=b&limit=3', 3, (r) => r.node === 'b'],
    ['/disk?limit=5', 5, () => true],
  ];
  for (const when of ['cold', 'warm']) {
    for (const [route, limit, pass] of cases) {
      const r = await server.get(route, { 'X-API-Key': key });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json, expected(lines, limit, pass), `${when} ${route}`);
    }
    await server.ctx.store.series.nodes();
  }
  const latest = await server.get('/disk/latest?node=b&mount=/', { 'X-API-Key': key });
  assert.deepEqual(latest.json, expected(lines, 1, (r) => r.node === 'b' && r.mount === '/').items[0]);
  const missing = await server.get('/disk/latest?node=c&mount=/data', { 'X-API-Key': key });
  assert.equal(missing.status, 404);
  const cli = await runEstate(['disk', 'latest', '--node', 'a', '--mount', '/data', '--json', '--data-dir', dir]);
  assert.equal(cli.code, 0, cli.stderr);
  assert.deepEqual(cli.json, expected(lines, 1, (r) => r.node === 'a' && r.mount === '/data').items[0]);
});

test('GET /health/pulse?node= and /health/pulse/status?node=: that node\'s entries and status; estate pulse status --node exits with its status', async (t) => {
  const dir = await tempDataDir(t);
  const statuses = { web: 'healthy', db: 'degraded', gpu: 'unhealthy' } as const;
  const lines: Line[] = [];
  for (let i = 0; i < 60; i++) {
    for (const [node, status] of Object.entries(statuses)) lines.push(record({ ts: tsOf(i), node, status: i === 59 ? status : 'healthy', checks: {} }));
  }
  // Another tool's pulse, newest of all, without a node.
  lines.push(record({ ts: tsOf(60), status: 'degraded' }));
  await writeLog(dir, 'health-pulse.jsonl', lines);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const r = await server.get('/health/pulse?node=db&limit=2', { 'X-API-Key': key });
  assert.deepEqual(r.json, expected(lines, 2, (rec) => rec.node === 'db'));
  for (const [node, status] of Object.entries(statuses)) {
    assert.equal((await server.get(`/health/pulse/status?node=${node}`, { 'X-API-Key': key })).json, status);
  }
  assert.equal((await server.get('/health/pulse/status', { 'X-API-Key': key })).json, 'degraded');
  assert.equal((await server.get('/health/pulse/status?node=nobody', { 'X-API-Key': key })).json, 'unknown');
  const codes: Record<string, number> = {};
  for (const node of ['web', 'db', 'gpu', 'nobody']) codes[node] = (await runEstate(['pulse', 'status', '--node', node, '--data-dir', dir])).code as number;
  assert.deepEqual(codes, { web: 0, db: 1, gpu: 2, nobody: 3 });
});

test('a warm read of one node reads back only that node\'s lines: the other nodes\' lines, overwritten in place with junk, are neither read nor counted', async (t) => {
  const dir = await tempDataDir(t);
  const lines: Line[] = [];
  for (let i = 0; i < 2000; i++) lines.push(record({ ts: tsOf(i), node: `n${i % 50}`, seq: i }));
  await writeLog(dir, 'trends.jsonl', lines);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  await server.ctx.store.series.nodes();
  const want = expected(lines, 1000, (r) => r.node === 'n7');
  assert.deepEqual((await server.get('/trends?node=n7&limit=1000', { 'X-API-Key': key })).json, want);

  // Every other node's line becomes junk of the same length (same file, same offsets, same size and time).
  const file = path.join(dir, 'trends.jsonl');
  const before = await stat(file);
  const handle = await open(file, 'r+');
  let offset = 0;
  for (const line of lines) {
    const bytes = Buffer.byteLength(line.text);
    if (line.record?.node !== 'n7') await handle.write(Buffer.alloc(bytes, 'x'), 0, bytes, offset);
    offset += bytes + 1;
  }
  await handle.close();
  await utimes(file, before.atime, before.mtime);
  const after = await stat(file);
  assert.equal(after.size, before.size);

  assert.deepEqual((await server.get('/trends?node=n7&limit=1000', { 'X-API-Key': key })).json, want);
  assert.deepEqual((await server.get('/trends?node=n7&limit=3', { 'X-API-Key': key })).json, expected(lines, 3, (r) => r.node === 'n7'));
  // A read of every node reads the file: it meets the junk.
  assert.equal((await server.get('/trends?limit=5', { 'X-API-Key': key })).json.skipped_lines > 0, true);
});
