import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { BIN, cliEnv } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { pidNamespacesUnavailable, UNSHARE_PID, unsharedPid } from './helpers/pid-namespace.ts';
import { completionBody } from './helpers/records.ts';
import { skipWithout } from './helpers/required-tool.ts';
import { newKey } from './helpers/server.ts';
import { waitUntil } from './helpers/wait-until.ts';

// Two `estate serve` processes on one data dir, one in its own PID namespace
// (as two containers sharing a volume): neither can check the other's pid,
// and still every (board, task_id) is stored once, 201 once.

// Waves of the same tasks at both servers at once make them contend for the
// lock on every wave (before the fix, about one task in eight was stored twice).
const WAVES = 30;
const TASKS_PER_WAVE = 5;
const PER_SERVER = 2;
const TASKS = WAVES * TASKS_PER_WAVE;

async function serve(t: TestContext, command: string[], dir: string): Promise<string> {
  const env = cliEnv();
  const [file, ...args] = [...command, process.execPath, BIN, 'serve', '--data-dir', dir, '--host', '127.0.0.1', '--port', '0'];
  const child = spawn(file as string, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const closed = new Promise((r) => child.once('close', r));
    // unshare ignores SIGTERM while it waits: the server, its child, gets it.
    const server = command.length ? unsharedPid(child.pid as number) : child.pid;
    if (server) process.kill(server, 'SIGTERM');
    else child.kill('SIGKILL');
    await closed;
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(-4000)));
  await waitUntil(`estate serve listens (stderr: ${stderr})`, () => / at http:\/\/\S+/.test(stdout) || child.exitCode !== null);
  const url = / at (http:\/\/\S+)/.exec(stdout)?.[1];
  assert.ok(url, `estate serve did not start: ${stderr}`);
  return url;
}

test('two servers in different PID namespaces on one data dir store each (board, task_id) once', { timeout: 180_000 }, async (t) => {
  if (skipWithout(t, pidNamespacesUnavailable())) return;
  const dir = await tempDataDir(t);
  const key = await newKey(dir, 'cron');
  const outside = await serve(t, [], dir);
  const inside = await serve(t, UNSHARE_PID, dir);

  const post = async (url: string, task: number, variant: string) => {
    const res = await fetch(`${url}/work/complete`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
      body: JSON.stringify(completionBody(`ns-${task}`, { summary: `written through ${variant}` })),
      signal: AbortSignal.timeout(120_000),
    });
    await res.arrayBuffer();
    return { task, status: res.status };
  };
  const answers: { task: number; status: number }[] = [];
  for (let wave = 0; wave < WAVES; wave++) {
    const tasks = Array.from({ length: TASKS_PER_WAVE }, (_, i) => wave * TASKS_PER_WAVE + i);
    const posts = tasks.flatMap((task) =>
      Array.from({ length: PER_SERVER }, (_, i) => [post(outside, task, `outside ${i}`), post(inside, task, `inside ${i}`)]).flat(),
    );
    answers.push(...(await Promise.all(posts)));
  }

  for (let task = 0; task < TASKS; task++) {
    const statuses = answers.filter((a) => a.task === task).map((a) => a.status);
    assert.equal(statuses.filter((s) => s === 201).length, 1, `T-ns-${task}: exactly one 201 (got ${statuses.join(', ')})`);
    assert.ok(statuses.every((s) => s === 201 || s === 200 || s === 409), `T-ns-${task}: ${statuses.join(', ')}`);
  }
  const stored = (await readFile(path.join(dir, 'work', 'completions.jsonl'), 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { board: string; task_id: string });
  const keys = stored.map((r) => `${r.board}/${r.task_id}`);
  assert.equal(keys.length, TASKS, 'one record per task');
  assert.equal(new Set(keys).size, TASKS, 'no (board, task_id) stored twice');
});
