import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, rename, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { DEMO_FIXTURE, tempDataDir } from './helpers/data-dir.ts';
import { completionBody, logLines } from './helpers/records.ts';
import { newKey, startServer, type TestResponse } from './helpers/server.ts';

// Only regular files are read or written in the data dir: a folder, a FIFO
// (named pipe) or another special file in a data file's place is refused
// like a link, with 503 and a detail naming the file relative to the data
// dir (CLI: one line, exit 1), never a 500, never an empty answer, and never
// a read that blocks on a FIFO. /readyz names a refused keys.json plainly.

const NOT_A_FILE = /^(?<file>[\w./-]+) in the data dir is (a folder|a FIFO \(named pipe\)), not a file: estate reads and writes only regular files there; replace it with the file itself$/;

async function fifo(dir: string, file: string): Promise<void> {
  await rm(path.join(dir, file), { recursive: true, force: true });
  await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
  execFileSync('mkfifo', ['-m', '600', path.join(dir, file)]);
}

async function folder(dir: string, file: string): Promise<void> {
  await rm(path.join(dir, file), { recursive: true, force: true });
  await mkdir(path.join(dir, file), { recursive: true });
}

function assertRefused(r: TestResponse, file: string, dir: string): void {
  assert.equal(r.status, 503, r.text);
  const m = NOT_A_FILE.exec(r.json?.detail);
  assert.ok(m, r.text);
  assert.equal(m.groups?.file, file);
  assert.ok(!r.text.includes(path.dirname(dir)), `no path: ${r.text}`);
}

test('a FIFO or a folder in a data file\'s place: reads and writes are 503 naming the file, nothing is stored', { skip: process.platform === 'win32' && 'no mkfifo' }, async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const auth = { 'X-API-Key': key };

  await fifo(dir, 'trends.jsonl');
  assertRefused(await server.get('/trends', auth), 'trends.jsonl', dir);
  await folder(dir, 'disk.jsonl');
  assertRefused(await server.get('/disk/latest', auth), 'disk.jsonl', dir);
  assertRefused(await server.get('/disk', auth), 'disk.jsonl', dir);

  await fifo(dir, 'state/heartbeat.json');
  assertRefused(await server.get('/state/heartbeat', auth), 'state/heartbeat.json', dir);
  assertRefused(await server.get('/events', auth), 'state/heartbeat.json', dir);

  await fifo(dir, 'work/completions.jsonl');
  assertRefused(await server.get('/work/feed'), 'work/completions.jsonl', dir);
  assertRefused(await server.request('POST', '/work/complete', { headers: auth, body: completionBody(1) }), 'work/completions.jsonl', dir);
  await folder(dir, 'work/completions.jsonl');
  assertRefused(await server.request('POST', '/work/complete', { headers: auth, body: completionBody(2) }), 'work/completions.jsonl', dir);
  assertRefused(await server.get('/work/feed'), 'work/completions.jsonl', dir);
  await rm(path.join(dir, 'work', 'completions.jsonl'), { recursive: true });
  assert.deepEqual(await logLines(dir, 'work/completions.jsonl'), [], 'nothing was stored');

  // The repository ledger's error names the file, not where the data dir is.
  await fifo(dir, 'repos.json');
  const repos = await server.get('/repos', auth);
  assert.match(String(repos.json?.ledger_error), /^repos\.json in the data dir is a FIFO/, repos.text);
  assert.ok(!repos.text.includes(dir), repos.text);
});

test('the CLI on a FIFO or a folder in a data file\'s place: one line, exit 1', { skip: process.platform === 'win32' && 'no mkfifo' }, async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  await fifo(dir, 'trends.jsonl');
  const trends = await runEstate(['trends', '--data-dir', dir]);
  assert.equal(trends.code, 1, trends.stderr);
  assert.match(trends.stderr, /^estate: trends\.jsonl in the data dir is a FIFO \(named pipe\), not a file: [^\n]*\n$/);
  await folder(dir, 'work/completions.jsonl');
  const complete = await runEstate(['work', 'complete', '--task-id', 'T-1', '--board', 'ops', '--assignee', 'cron', '--title', 'x', '--data-dir', dir]);
  assert.equal(complete.code, 1, complete.stderr);
  assert.match(complete.stderr, /^estate: work\/completions\.jsonl in the data dir is a folder, not a file: [^\n]*\n$/);
  assert.ok(!`${trends.stderr}${complete.stderr}`.includes(dir), 'no path');
});

test('/readyz names a keys.json that is a link or not a file as refused, not "failed (failed)"', async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const keys = path.join(dir, 'keys.json');
  await rename(keys, `${keys}.real`);
  await symlink(`${keys}.real`, keys);
  const linked = await server.get('/readyz');
  assert.equal(linked.status, 503);
  assert.equal(linked.json.detail, 'not ready: credential_store failed (refused: link)');

  await rm(keys);
  await mkdir(keys);
  const asFolder = await server.get('/readyz');
  assert.equal(asFolder.json.detail, 'not ready: credential_store failed (refused: not a regular file)');
  const r = await server.get('/trends', { 'X-API-Key': key });
  assert.equal(r.status, 503, r.text);
  // The answer names the credential store, not its file (the server's log does).
  assert.match(r.json.detail, /^the credential store is not a regular file: no API key can be checked/);
  assert.ok(!r.text.includes('keys.json') && !r.text.includes(dir), r.text);
});
