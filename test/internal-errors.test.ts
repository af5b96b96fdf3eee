import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { DEMO_FIXTURE, tempDataDir } from './helpers/data-dir.ts';
import { failOpens } from './helpers/fail-opens.ts';
import { newKey, startServer } from './helpers/server.ts';

// Our failures (a log the disk cannot read: EIO on its open, with the path in
// the kernel's message) answer exactly {"detail":"Internal Server Error"};
// the operator learns the cause from one log line with the request's id, the
// error code and the file relative to the data dir (`<data dir>/…`): never a
// stack trace, never the data dir's absolute path. (A folder or a link in a
// file's place is no internal error but a clear 503: non-regular-files and
// symlinks tests.)

const PRELOAD = path.join(import.meta.dirname, 'helpers', 'fail-opens-preload.mjs');

/** A stack frame (`    at fn (file:line)`) or a path outside the data dir's mark. */
const STACK = /\n\s+at |\bat .*:\d+:\d+/;

/** [case, the data file whose open fails with EIO, method, route]. */
const cases: [string, string, string, string][] = [
  ['a log that cannot be read', 'trends.jsonl', 'GET', '/trends'],
  ['the newest record of a log that cannot be read', 'disk.jsonl', 'GET', '/disk/latest'],
  ['a pulse log that cannot be read', 'health-pulse.jsonl', 'GET', '/health/pulse'],
  ['a completion log that cannot be read (read)', 'work/completions.jsonl', 'GET', '/work/feed'],
  ['a completion log that cannot be read (write)', 'work/completions.jsonl', 'POST', '/work/complete'],
];

/** The cause as logged: the errno, and the file as `<data dir>/…`. */
function causeOf(file: string): RegExp {
  return new RegExp(`EIO: i/o error, open '<data dir>/${file.replaceAll('.', '\\.')}'`);
}

test('an internal error is {"detail":"Internal Server Error"} and one log line with the cause, no stack, no absolute path', async (t) => {
  for (const [name, file, method, route] of cases) {
    await t.test(name, async (t) => {
      const dir = await tempDataDir(t, DEMO_FIXTURE);
      const key = await newKey(dir);
      const lines: Record<string, unknown>[] = [];
      const server = await startServer(t, dir, { log: (line) => lines.push(line) });
      failOpens(t, 'EIO', `${path.sep}${file}`);
      const cause = causeOf(file);
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
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  failOpens(t, 'EIO', `${path.sep}health-pulse.jsonl`);
  failOpens(t, 'EIO', `${path.sep}completions.jsonl`);
  for (const route of ['/status', '/summary', '/api/garden', '/estate/agents', '/estate/status', '/health']) {
    const r = await server.get(route, { 'X-API-Key': key });
    assert.ok(r.status === 200 || r.text === '{"detail":"Internal Server Error"}', `${route}: ${r.status} ${r.text.slice(0, 200)}`);
    assert.ok(!r.text.includes(dir), `${route} shows the data dir: ${r.text.slice(0, 300)}`);
  }
  assert.match((await server.get('/status')).text, /unavailable: cannot read source: EIO/);
});

test('the CLI reports an internal error as one line without a stack (unless --debug)', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const env = { NODE_OPTIONS: `--import=${PRELOAD}`, ESTATE_TEST_FAIL_OPEN: 'EIO:trends.jsonl' };
  const r = await runEstate(['trends', '--data-dir', dir], { env });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^estate: [^\n]*EIO[^\n]*\n$/);
  const debug = await runEstate(['trends', '--data-dir', dir, '--debug'], { env });
  assert.match(debug.stderr, STACK, '--debug adds the stack');
});
