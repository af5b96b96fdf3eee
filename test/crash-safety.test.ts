import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFile, readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { BIN, runEstate, cliEnv } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey } from './helpers/server.ts';
import { waitUntil } from './helpers/wait-until.ts';

// Writers die at any instant and nothing acknowledged is lost. Rounds of:
// `estate serve` with HTTP writers, and `estate work complete` processes
// writing the same log directly; the server and some CLI writers are killed
// with SIGKILL at seeded-random moments; what was not acknowledged is retried
// (as cron would), and the server restarts. At the end every acknowledged
// completion is in the log exactly once, every line parses but a torn one
// (a crash mid-line, made on purpose here), which readers skip and the next
// writer closes off. ESTATE_CRASH_SEED picks another seed, ESTATE_CRASH_ROUNDS
// runs longer.

const SEED = Number(process.env.ESTATE_CRASH_SEED ?? 8);
const ROUNDS = Number(process.env.ESTATE_CRASH_ROUNDS ?? 4);
const HTTP_WRITERS = 4;
const CLI_WRITERS = 2;
const TORN = '{"id":"wc_torn000000000000","task_id":"TORN","bo';

/** A small seeded PRNG (mulberry32): the same seed, the same kill times. */
function random(seed: number): (min: number, max: number) => number {
  let a = seed >>> 0;
  return (min, max) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return min + Math.floor((((x ^ (x >>> 14)) >>> 0) / 4294967296) * (max - min + 1));
  };
}

const ENV = cliEnv();

interface Server {
  url: string;
  child: ChildProcess;
  exited: Promise<unknown>;
}

async function startEstateServer(dir: string, children: Set<ChildProcess>): Promise<Server> {
  const child = spawn(process.execPath, [BIN, 'serve', '--data-dir', dir, '--port', '0'], { env: ENV, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const exited = new Promise((resolve) => child.on('close', resolve)).finally(() => children.delete(child));
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  // Drained (the access log is long), keeping the tail for a failure's message.
  child.stderr?.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(-4000)));
  await waitUntil(`the server listens (stderr: ${stderr})`, () => / at http:\/\/\S+/.test(stdout) || child.exitCode !== null);
  const url = / at (http:\/\/\S+)/.exec(stdout)?.[1];
  assert.ok(url, `estate serve did not start: ${stderr}`);
  return { url, child, exited };
}

type Outcome = 'acknowledged' | 'refused' | 'unknown';

/** The one body of task `id`, whoever sends it: a retry is an identical replay. */
function completion(id: string): { task_id: string; board: string; assignee: string; title: string } {
  return { task_id: id, board: 'crash', assignee: 'writer', title: `Task ${id}` };
}

test(`crash safety: ${ROUNDS} rounds of SIGKILLed servers and CLI writers (seed ${SEED}) lose no acknowledged write and duplicate none`, { timeout: 300_000 }, async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir);
  const log = path.join(dir, 'work', 'completions.jsonl');
  const rand = random(SEED);
  const children = new Set<ChildProcess>();
  t.after(async () => {
    for (const child of children) child.kill('SIGKILL');
  });

  let next = 0;
  const acknowledged = new Set<string>();
  /** Task ids whose write was not acknowledged (the writer or the server died): retried like a cron job would. */
  const retry: string[] = [];
  const attempted = new Set<string>();
  let interrupted = 0;
  const take = () => retry.shift() ?? `T-${next++}`;
  const settle = (id: string, outcome: Outcome) => {
    attempted.add(id);
    if (outcome === 'acknowledged') acknowledged.add(id);
    else if (outcome === 'unknown') {
      interrupted++;
      retry.push(id);
    }
    else assert.fail(`${id} was refused`);
  };

  const httpWrite = async (url: string, id: string): Promise<Outcome> => {
    try {
      const res = await fetch(`${url}/work/complete`, {
        method: 'POST',
        headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
        body: JSON.stringify(completion(id)),
        signal: AbortSignal.timeout(10_000),
      });
      await res.text();
      if (res.status === 201 || res.status === 200) return 'acknowledged';
      if (res.status >= 500) return 'unknown';
      return 'refused';
    } catch {
      return 'unknown';
    }
  };

  const cliWrite = (id: string, killAfterMs: number | undefined): Promise<Outcome> =>
    new Promise((resolve) => {
      const body = completion(id);
      const args = ['work', 'complete', '--task-id', id, '--board', body.board, '--assignee', body.assignee, '--title', body.title, '--json', '--data-dir', dir];
      const child = spawn(process.execPath, [BIN, ...args], { env: ENV, stdio: ['ignore', 'ignore', 'ignore'] });
      children.add(child);
      const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
      child.on('close', (code) => {
        clearTimeout(timer);
        children.delete(child);
        resolve(code === 0 ? 'acknowledged' : 'unknown');
      });
    });

  for (let round = 0; round < ROUNDS; round++) {
    const server = await startEstateServer(dir, children);
    let stopped = false;
    const httpLoops = Array.from({ length: HTTP_WRITERS }, async () => {
      while (!stopped) {
        const id = take();
        settle(id, await httpWrite(server.url, id));
      }
    });
    const cliLoops = Array.from({ length: CLI_WRITERS }, async () => {
      while (!stopped) {
        const id = take();
        // One CLI writer in three is killed at a random moment of its run.
        settle(id, await cliWrite(id, rand(0, 2) === 0 ? rand(20, 400) : undefined));
      }
    });
    await new Promise((resolve) => setTimeout(resolve, rand(400, 1500)));
    server.child.kill('SIGKILL');
    await server.exited;
    stopped = true;
    await Promise.all([...httpLoops, ...cliLoops]);

    if (round === 0) {
      // A writer that died in the middle of its line: readers skip it, the next writer closes it off.
      await appendFile(log, TORN);
      const feed = await runEstate(['work', 'feed', '--limit', '1000', '--json', '--data-dir', dir]);
      assert.equal(feed.code, 0, feed.stderr);
      assert.equal(feed.json.skipped_lines, 1, 'the torn line is skipped and counted');
      // Every acknowledged write, and maybe some whose writer died after the write and before the answer.
      assert.ok(feed.json.count >= Math.min(1000, acknowledged.size) && feed.json.count <= attempted.size, `${feed.json.count} records`);
    }
  }

  // Once more, calmly: every write that was never acknowledged is retried until it is.
  const server = await startEstateServer(dir, children);
  while (retry.length) {
    const id = retry.shift() as string;
    assert.equal(await httpWrite(server.url, id), 'acknowledged', id);
    acknowledged.add(id);
  }
  server.child.kill('SIGTERM');
  await server.exited;

  t.diagnostic(`${attempted.size} task ids, ${interrupted} writes interrupted by a kill and retried, over ${ROUNDS} rounds`);
  assert.ok(acknowledged.size > ROUNDS * 5, 'the writers wrote');
  assert.ok(interrupted >= ROUNDS, 'kills interrupted writes');
  assert.equal(acknowledged.size, attempted.size, 'every id was acknowledged in the end');

  const text = await readFile(log, 'utf8');
  assert.ok(text.endsWith('\n'), 'the log ends with a complete line');
  const lines = text.slice(0, -1).split('\n');
  const counts = new Map<string, number>();
  let torn = 0;
  for (const line of lines) {
    if (line === TORN) {
      torn++;
      continue;
    }
    const record = JSON.parse(line) as { task_id: string; board: string; id: string; completed_at: string };
    assert.equal(record.board, 'crash');
    assert.match(record.id, /^wc_[0-9a-f]{16}$/);
    counts.set(record.task_id, (counts.get(record.task_id) ?? 0) + 1);
  }
  assert.equal(torn, 1, 'the torn line stayed a line of its own: nothing was glued to it');
  const missing = [...acknowledged].filter((id) => !counts.has(id));
  const twice = [...counts].filter(([, n]) => n !== 1).map(([id]) => id);
  assert.deepEqual(missing, [], 'no acknowledged write is lost');
  assert.deepEqual(twice, [], 'no write is stored twice');
  assert.equal(counts.size, acknowledged.size, 'nothing else was stored');
});
