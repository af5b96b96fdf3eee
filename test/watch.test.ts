import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFile, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { BIN, cliEnv, runEstate, startEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';
import { skipWithout } from './helpers/required-tool.ts';
import { NO_TERMINAL } from './helpers/terminal.ts';
import { waitUntil } from './helpers/wait-until.ts';

// `--watch` on the read commands marked `cli.watch`: the answer again each
// time it changes, locally (the file watcher) and remotely (If-None-Match
// polling), redrawn in place on a terminal, NDJSON with --json when piped.

const CLEAR = '\x1b[H\x1b[2J';

async function addTrend(dir: string, point: Record<string, unknown>): Promise<void> {
  await appendFile(path.join(dir, 'trends.jsonl'), `${JSON.stringify(point)}\n`);
}

test('trends --watch --json, locally: one JSON document per line, a new one when trends.jsonl grows; SIGINT exits 0', async (t) => {
  const dir = await tempDataDir(t);
  await addTrend(dir, { ts: '2026-01-01T00:00:00Z', cpu_pct: 11 });
  // A long interval: the second document can only come from the file watcher.
  const watch = startEstate(t, ['trends', '--watch', '--json', '--interval', '600', '--data-dir', dir]);
  await watch.waitForStdout('the first document', (out) => out.endsWith('\n'));
  await addTrend(dir, { ts: '2026-01-01T00:01:00Z', cpu_pct: 22 });
  await watch.waitForStdout('the second document', (out) => out.split('\n').length === 3);
  const stopped = await watch.stop('SIGINT');
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.equal(stopped.stderr, '');
  const docs = stopped.stdout.trim().split('\n').map((line) => JSON.parse(line));
  assert.deepEqual(
    docs.map((d) => d.items.map((i: { cpu_pct: number }) => i.cpu_pct)),
    [[11], [22, 11]],
  );
  assert.equal(docs[1].count, 2);
});

test('events --watch, piped: each new rendering follows the last after a blank line; SIGTERM exits 0', async (t) => {
  const dir = await tempDataDir(t);
  const heartbeat = path.join(dir, 'state', 'heartbeat.json');
  await mkdir(path.dirname(heartbeat), { recursive: true });
  // Replaced whole (write, then rename), as writers of state files do: never read half-written.
  const beat = async (name: string) => {
    await writeFile(`${heartbeat}.tmp`, JSON.stringify({ nodes: [{ name, last_seen: new Date().toISOString(), status: 'ok' }] }));
    await rename(`${heartbeat}.tmp`, heartbeat);
  };
  await beat('node-one');
  const watch = startEstate(t, ['events', '--watch', '--interval', '600', '--data-dir', dir]);
  await watch.waitForStdout('the first rendering', (out) => out.includes('node-one'));
  await beat('node-two');
  await watch.waitForStdout('the second rendering', (out) => out.includes('node-two'));
  const stopped = await watch.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
  const [first, second, ...rest] = stopped.stdout.split('\n\n');
  assert.deepEqual(rest, []);
  assert.ok(first?.includes('node-one') && !first.includes('node-two'), first);
  assert.ok(second?.includes('node-two') && !second.includes('node-one'), second);
  assert.ok(!stopped.stdout.includes('\x1b'), 'no escape sequences when piped');
});

test('trends --watch sees an editor\'s save of trends.jsonl (a new file written, then renamed over the log) at once', async (t) => {
  const dir = await tempDataDir(t);
  const log = path.join(dir, 'trends.jsonl');
  await addTrend(dir, { ts: '2026-01-01T00:00:00Z', cpu_pct: 11 });
  // A long interval: each new document can only come from the file watcher.
  const watch = startEstate(t, ['trends', '--watch', '--json', '--interval', '600', '--data-dir', dir]);
  await watch.waitForStdout('the first document', (out) => out.endsWith('\n'));
  const save = async (text: string) => {
    await writeFile(`${log}.swp`, text);
    await rename(`${log}.swp`, log);
  };
  // The editor's save fixes a value and adds a line; the log is another file (inode) now.
  await save(`${JSON.stringify({ ts: '2026-01-01T00:00:00Z', cpu_pct: 12 })}\n${JSON.stringify({ ts: '2026-01-01T00:01:00Z', cpu_pct: 22 })}\n`);
  await watch.waitForStdout('the saved document', (out) => out.split('\n').length === 3);
  // Appends to the new file are seen as well: the watcher did not stay on the old one.
  await addTrend(dir, { ts: '2026-01-01T00:02:00Z', cpu_pct: 33 });
  await watch.waitForStdout('the appended document', (out) => out.split('\n').length === 4);
  const stopped = await watch.stop('SIGINT');
  assert.equal(stopped.code, 0, stopped.stderr);
  const docs = stopped.stdout.trim().split('\n').map((line) => JSON.parse(line));
  assert.deepEqual(
    docs.map((d) => d.items.map((i: { cpu_pct: number }) => i.cpu_pct)),
    [[11], [22, 12], [33, 22, 12]],
  );
});

test('events --watch sees state/ made after it started, and made again after it was removed', async (t) => {
  const dir = await tempDataDir(t);
  const state = path.join(dir, 'state');
  await rm(state, { recursive: true, force: true });
  const beat = async (name: string) => {
    await mkdir(state, { recursive: true });
    await writeFile(path.join(state, 'heartbeat.json'), JSON.stringify({ nodes: [{ name, last_seen: new Date().toISOString(), status: 'ok' }] }));
  };
  // A long interval: each new rendering can only come from the file watcher.
  const watch = startEstate(t, ['events', '--watch', '--json', '--interval', '600', '--data-dir', dir]);
  await watch.waitForStdout('the first document', (out) => out.endsWith('\n'));
  await beat('node-one');
  await watch.waitForStdout('node-one, in a folder made after the watch began', (out) => out.includes('node-one'));
  await rm(state, { recursive: true });
  await watch.waitForStdout('the document without state/', (out) => out.split('\n').length === 4);
  await beat('node-two');
  await watch.waitForStdout('node-two, in the folder made again', (out) => out.includes('node-two'));
  const stopped = await watch.stop('SIGINT');
  assert.equal(stopped.code, 0, stopped.stderr);
});

test('trends --watch --url: polls with If-None-Match (304 while unchanged), a new document only when the answer changes', async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir);
  await addTrend(dir, { ts: '2026-01-01T00:00:00Z', cpu_pct: 11 });
  const lines: Record<string, unknown>[] = [];
  const server = await startServer(t, dir, { log: (line) => lines.push(line) });
  const polls = (status: number) => lines.filter((l) => typeof l.path === 'string' && l.path.startsWith('/trends') && l.status === status).length;
  const watch = startEstate(t, ['trends', '--watch', '--json', '--interval', '0.2', '--url', server.url, '--api-key', key]);
  await watch.waitForStdout('the first document', (out) => out.endsWith('\n'));
  await waitUntil('the server answered 304 twice', () => polls(304) >= 2, 10_000);
  assert.equal(watch.stdout().split('\n').length, 2, 'no new document while the answer is the same');
  await addTrend(dir, { ts: '2026-01-01T00:01:00Z', cpu_pct: 22 });
  await watch.waitForStdout('the second document', (out) => out.split('\n').length === 3);
  const stopped = await watch.stop('SIGINT');
  assert.equal(stopped.code, 0, stopped.stderr);
  const docs = stopped.stdout.trim().split('\n').map((line) => JSON.parse(line));
  assert.deepEqual(docs[1].items.map((i: { cpu_pct: number }) => i.cpu_pct), [22, 11]);
  assert.equal(polls(200), 2, 'one 200 per document shown');
});

test('--watch is offered on the commands marked for it only; --interval is checked', async (t) => {
  const dir = await tempDataDir(t);
  for (const words of [['trends'], ['trends', 'latest'], ['events'], ['pulse'], ['pulse', 'status'], ['disk'], ['builds']]) {
    const help = await runEstate([...words, '--help']);
    assert.match(help.stdout, /--watch/, words.join(' '));
  }
  assert.doesNotMatch((await runEstate(['work', 'complete', '--help'])).stdout, /--watch/);
  const bad = await runEstate(['trends', '--watch', '--interval', 'soon', '--data-dir', dir]);
  assert.equal(bad.code, 2);
  assert.equal(bad.stderr, 'estate: --interval: a number of seconds from 0.1 to 3600, like 2 or 0.5, not "soon"\n');
  const alone = await runEstate(['trends', '--interval', '5', '--data-dir', dir]);
  assert.equal(alone.code, 2);
  assert.equal(alone.stderr, 'estate: --interval goes with --watch\n');
});

test('trends --watch on a terminal: the screen is cleared before each rendering; Ctrl-C exits 0', async (t) => {
  if (skipWithout(t, NO_TERMINAL)) return;
  const dir = await tempDataDir(t);
  await addTrend(dir, { ts: '2026-01-01T00:00:00Z', cpu_pct: 11 });
  // Values matched with their `%`: the title line's clock may hold any two digits.
  // `exec`: no shell stays in the terminal's foreground group to die of the Ctrl-C itself.
  const command = `exec ${[process.execPath, BIN, 'trends', '--watch', '--interval', '600', '--data-dir', dir].map((w) => `'${w.replace(/'/g, `'\\''`)}'`).join(' ')}`;
  const env = cliEnv({ TERM: 'xterm', COLUMNS: '120' });
  const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (output += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (output += c));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  await waitUntil('the first rendering', () => output.includes('11%'), 10_000);
  await addTrend(dir, { ts: '2026-01-01T00:01:00Z', cpu_pct: 22 });
  await waitUntil('the second rendering', () => output.includes('22%'), 10_000);
  child.stdin.write('\x03'); // Ctrl-C, through the terminal: SIGINT to the foreground process
  assert.equal(await exited, 0, output);
  const screens = output.split(CLEAR).slice(1);
  assert.equal(screens.length, 2, JSON.stringify(output));
  assert.ok(screens[0]?.includes('11%') && !screens[0].includes('22%'));
  assert.ok(screens[1]?.includes('22%') && screens[1].includes('11%'));
});
