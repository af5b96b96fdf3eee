import assert from 'node:assert/strict';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { DEMO_FIXTURE, tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';

// Our failures (an unreadable log) answer exactly {"detail":"Internal Server
// Error"}; the operator learns the cause from one log line with the request's
// id, the error code and the file relative to the data dir: never a stack
// trace, never the data dir's absolute path.

/** A stack frame (`    at fn (file:line)`) or a path outside the data dir's mark. */
const STACK = /\n\s+at |\bat .*:\d+:\d+/;

const cases: [string, (dir: string) => Promise<unknown>, string, string, RegExp][] = [
  ['a log that is a directory', (dir) => replaceWithDir(dir, 'trends.jsonl'), 'GET', '/trends', /EISDIR/],
  ['the newest record of a directory', (dir) => replaceWithDir(dir, 'disk.jsonl'), 'GET', '/disk/latest', /EISDIR/],
  ['a pulse log that is a directory', (dir) => replaceWithDir(dir, 'health-pulse.jsonl'), 'GET', '/health/pulse', /EISDIR/],
  ['a completion log that is a directory (read)', (dir) => replaceWithDir(dir, 'work/completions.jsonl'), 'GET', '/work/feed', /EISDIR/],
  ['a completion log that is a directory (write)', (dir) => replaceWithDir(dir, 'work/completions.jsonl'), 'POST', '/work/complete', /EISDIR/],
];

async function replaceWithDir(dir: string, file: string): Promise<void> {
  await rm(path.join(dir, file), { force: true });
  await mkdir(path.join(dir, file), { recursive: true });
}

test('an internal error is {"detail":"Internal Server Error"} and one log line with the cause, no stack, no absolute path', async (t) => {
  for (const [name, breakIt, method, route, cause] of cases) {
    await t.test(name, async (t) => {
      const dir = await tempDataDir(t, DEMO_FIXTURE);
      const key = await newKey(dir);
      const lines: Record<string, unknown>[] = [];
      const server = await startServer(t, dir, { log: (line) => lines.push(line) });
      await breakIt(dir);
      const body = method === 'POST' ? { task_id: 'T-1', board: 'ops', assignee: 'a', title: 't' } : undefined;
      const r = await server.request(method, route, { headers: { 'X-API-Key': key }, body });
      assert.equal(r.status, 500);
      assert.equal(r.text, '{"detail":"Internal Server Error"}');
      const id = r.headers.get('x-request-id');
      const errors = lines.filter((l) => l.level === 'error');
      assert.equal(errors.length, 1, JSON.stringify(lines));
      const line = errors[0] as Record<string, unknown>;
      assert.equal(line.id, id, 'the log line names the request id the client got');
      assert.equal(line.path, route.split('?')[0]);
      assert.match(String(line.cause), cause);
      for (const l of lines) {
        const text = JSON.stringify(l);
        assert.doesNotMatch(text, STACK, 'no stack trace');
        assert.ok(!text.includes(dir), `no absolute path: ${text}`);
        assert.ok(!text.includes(path.dirname(dir)), `no absolute path: ${text}`);
      }
      const access = lines.find((l) => l.event === 'request');
      assert.deepEqual([access?.id, access?.status], [id, 500]);
    });
  }
});

test('an error detail that names a file in the data dir says <data dir>, not where it is', async (t) => {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ stats: { command: ['./no-such-script.sh'] } }));
  const key = await newKey(dir);
  const lines: Record<string, unknown>[] = [];
  const server = await startServer(t, dir, { log: (line) => lines.push(line) });
  const r = await server.get('/stats', { 'X-API-Key': key });
  assert.equal(r.status, 502);
  assert.match(r.json.detail, /<data dir>\/no-such-script\.sh not found/);
  assert.ok(!r.text.includes(dir), r.text);
  assert.ok(lines.every((l) => !JSON.stringify(l).includes(dir)));
});

test('public pages and aggregates say which source failed by its error code, never by its path', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  await replaceWithDir(dir, 'health-pulse.jsonl');
  await replaceWithDir(dir, 'work/completions.jsonl');
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  for (const route of ['/status', '/summary', '/api/garden', '/estate/agents', '/estate/status', '/health']) {
    const r = await server.get(route, { 'X-API-Key': key });
    assert.ok(r.status === 200 || r.text === '{"detail":"Internal Server Error"}', `${route}: ${r.status} ${r.text.slice(0, 200)}`);
    assert.ok(!r.text.includes(dir), `${route} shows the data dir: ${r.text.slice(0, 300)}`);
  }
  assert.match((await server.get('/status')).text, /unavailable: cannot read source: EISDIR/);
});

test('the CLI reports an internal error as one line without a stack (unless --debug)', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  await replaceWithDir(dir, 'trends.jsonl');
  const r = await runEstate(['trends', '--data-dir', dir]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^estate: [^\n]*EISDIR[^\n]*\n$/);
  const debug = await runEstate(['trends', '--data-dir', dir, '--debug']);
  assert.match(debug.stderr, STACK, '--debug adds the stack');
});
