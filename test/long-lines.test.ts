import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { MAX_LINE_BYTES, readLinesBackward } from '../src/core/jsonl/read-lines-backward.ts';
import { scanRecords } from '../src/core/jsonl/scan-records.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { completionBody } from './helpers/records.ts';
import { newKey, startServer } from './helpers/server.ts';

// A line longer than MAX_LINE_BYTES is passed over, never assembled, and
// counted as skipped. The long lines here are valid records, so a reader that
// still assembled them would return them (and the 16 MB one used to take
// longer than the test client's 10 s timeout: reading backwards re-copied it
// per chunk).

const MB = 1024 * 1024;
const START = Date.parse('2026-11-01T00:00:00Z');

function point(i: number, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ ts: new Date(START + i * 60_000).toISOString(), seq: i, ...extra });
}

/** A valid trend point of about `bytes` bytes. */
function hugePoint(i: number, bytes: number): string {
  return point(i, { blob: 'x'.repeat(bytes) });
}

function completion(i: number, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    id: `wc_${i.toString(16).padStart(16, '0')}`,
    task_id: `T-${i}`,
    board: 'ops',
    assignee: 'builder',
    title: `Task ${i}`,
    completed_at: new Date(START + i * 60_000).toISOString(),
    ...extra,
  });
}

test('a 16 MB last line without a newline is skipped and counted by /trends and /estate/status', async (t) => {
  const dir = await tempDataDir(t);
  const points = Array.from({ length: 10 }, (_, i) => point(i));
  await writeFile(path.join(dir, 'trends.jsonl'), `${points.join('\n')}\n${hugePoint(10, 16 * MB)}`);
  const completions = Array.from({ length: 3 }, (_, i) => completion(i));
  await mkdir(path.join(dir, 'work'), { recursive: true });
  await writeFile(path.join(dir, 'work', 'completions.jsonl'), `${completions.join('\n')}\n${completion(99, { summary: 'y'.repeat(16 * MB) })}`);
  const key = await newKey(dir);
  const server = await startServer(t, dir);

  const trends = await server.get('/trends?limit=100', { 'X-API-Key': key });
  assert.equal(trends.status, 200);
  assert.deepEqual(trends.json.items.map((p: { seq: number }) => p.seq), [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
  assert.equal(trends.json.skipped_lines, 1);

  const latest = await server.get('/trends/latest', { 'X-API-Key': key });
  assert.equal(latest.status, 200);
  assert.equal(latest.json.seq, 9);

  const status = await server.get('/estate/status');
  assert.equal(status.status, 200);
  assert.equal(status.json.last_activity, new Date(START + 2 * 60_000).toISOString());
  assert.deepEqual(status.json.errors, []);

  const logs = await server.get('/estate/logs?limit=10');
  assert.equal(logs.status, 200);
  assert.equal(logs.json.count, 3);
  assert.equal(logs.json.skipped_lines, 1);
});

test('a huge line in the middle of a log is skipped and counted, the records around it are read', async (t) => {
  const dir = await tempDataDir(t);
  const lines = [point(0), point(1), point(2), hugePoint(3, 2 * MB), point(4), point(5)];
  await writeFile(path.join(dir, 'trends.jsonl'), `${lines.join('\n')}\n`);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const all = await server.get('/trends?limit=100', { 'X-API-Key': key });
  assert.equal(all.status, 200);
  assert.deepEqual(all.json.items.map((p: { seq: number }) => p.seq), [5, 4, 2, 1, 0]);
  assert.equal(all.json.skipped_lines, 1);
  // A page that stops before the long line has not passed it.
  const two = await server.get('/trends?limit=2', { 'X-API-Key': key });
  assert.deepEqual(two.json.items.map((p: { seq: number }) => p.seq), [5, 4]);
  assert.equal(two.json.skipped_lines, 0);
});

test('the work feed index skips a huge completion line, and a huge torn last line once it ends', async (t) => {
  const dir = await tempDataDir(t);
  await mkdir(path.join(dir, 'work'), { recursive: true });
  const lines = [completion(0), completion(1, { summary: 'z'.repeat(2 * MB) }), completion(2)];
  // The last line is a long record still without its newline (a torn write).
  await writeFile(path.join(dir, 'work', 'completions.jsonl'), `${lines.join('\n')}\n${completion(3).slice(0, -1)}, "summary": "${'w'.repeat(3 * MB)}`);
  const key = await newKey(dir);
  const server = await startServer(t, dir);

  const byBoard = await server.get('/work/feed?board=ops&limit=10', { 'X-API-Key': key });
  assert.equal(byBoard.status, 200);
  assert.deepEqual(byBoard.json.items.map((r: { task_id: string }) => r.task_id), ['T-2', 'T-0']);
  assert.equal(byBoard.json.skipped_lines, 2, 'the long line and the torn tail');
  const tail = await server.get('/work/feed?limit=10', { 'X-API-Key': key });
  assert.deepEqual(tail.json.items.map((r: { task_id: string }) => r.task_id), ['T-2', 'T-0']);
  assert.equal(tail.json.skipped_lines, 2);

  // An append ends the torn line first: it stays one skipped line, the new record is read.
  const created = await server.request('POST', '/work/complete', { headers: { 'X-API-Key': key }, body: completionBody('new') });
  assert.equal(created.status, 201);
  for (const route of ['/work/feed?board=ops&limit=10', '/work/feed?limit=10']) {
    const after = await server.get(route, { 'X-API-Key': key });
    assert.deepEqual(after.json.items.map((r: { task_id: string }) => r.task_id), ['T-new', 'T-2', 'T-0'], route);
    assert.equal(after.json.skipped_lines, 2, route);
  }
  // The long record's key was never indexed: the same task can be completed (it was not stored).
  const again = await server.request('POST', '/work/complete', { headers: { 'X-API-Key': key }, body: completionBody(1) });
  assert.equal(again.status, 201);
});

test('readLinesBackward and scanRecords yield a line over the maximum as skipped, whatever the chunk size', async (t) => {
  const dir = await tempDataDir(t);
  const file = path.join(dir, 'log.jsonl');
  const max = 40;
  const short = (i: number) => JSON.stringify({ i });
  const long = (i: number, n: number) => JSON.stringify({ i, pad: 'p'.repeat(n) });
  const exact = JSON.stringify({ i: 9, pad: '' }).padEnd(max, ' ');
  const lines = [long(0, 100), short(1), exact, long(3, max), short(4), long(5, 1000)];
  const cases: [string, string][] = [
    ['trailing newline', `${lines.join('\n')}\n`],
    ['no trailing newline', lines.join('\n')],
    ['CRLF', `${lines.join('\r\n')}\r\n`],
  ];
  const expected = lines.map((l) => (Buffer.byteLength(l) > max ? null : l));
  for (const [name, text] of cases) {
    await writeFile(file, text);
    const crlf = name === 'CRLF';
    for (const chunk of [1, 3, 7, 39, 40, 41, 64, 65_536]) {
      const got: (string | null)[] = [];
      for await (const line of readLinesBackward(file, chunk, crlf ? max + 1 : max)) got.push(line === null ? null : line.replace(/\r$/, ''));
      assert.deepEqual(got, [...expected].reverse(), `${name}, chunk ${chunk}`);
    }
    const stats = { skipped: 0 };
    const records: unknown[] = [];
    for await (const record of scanRecords(file, stats, crlf ? max + 1 : max)) records.push(record);
    assert.deepEqual(records, expected.filter((l) => l !== null).map((l) => JSON.parse(l)), name);
    assert.equal(stats.skipped, 3, name);
  }
  assert.equal(MAX_LINE_BYTES, 1024 * 1024);
});
