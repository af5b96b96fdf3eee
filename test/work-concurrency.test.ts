import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { completionBody, entryBody } from './helpers/records.ts';
import { newKey, startServer } from './helpers/server.ts';

// Many writers at once, over real HTTP and as real processes, against one
// data dir: every acknowledged record is in the log exactly once, whole.

const POSTS = 200;
const PROCESSES = 20;

/**
 * A POST with a generous timeout: twenty CLI processes starting at once can
 * keep a small machine's CPUs busy for seconds (this asserts nothing about speed).
 */
async function post(url: string, path: string, key: string, body: object): Promise<{ status: number; json: any }> {
  const res = await fetch(url + path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(120_000),
  });
  return { status: res.status, json: await res.json() };
}

async function storedRecords(file: string): Promise<Record<string, unknown>[]> {
  const text = await readFile(file, 'utf8');
  assert.ok(text.endsWith('\n'), 'the log ends with a complete line');
  return text
    .slice(0, -1)
    .split('\n')
    .map((line, i) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        assert.fail(`line ${i + 1} is not valid JSON: ${line.slice(0, 200)}`);
      }
    });
}

test(`${POSTS} concurrent POSTs and ${PROCESSES} concurrent CLI processes: every completion once, every line valid`, async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir, 'cron');
  const server = await startServer(t, dir);
  // Long summaries make torn or interleaved writes visible as broken JSON.
  const summary = (i: number) => `summary ${i} `.repeat(60);
  const posts = Array.from({ length: POSTS }, (_, i) =>
    post(server.url, '/work/complete', key, completionBody(`http-${i}`, { summary: summary(i) })),
  );
  const processes = Array.from({ length: PROCESSES }, (_, i) =>
    runEstate(['work', 'complete', '--task-id', `T-cli-${i}`, '--board', 'ops', '--assignee', 'cron', '--title', `Task cli-${i}`, '--summary', summary(i), '--data-dir', dir, '--json'], {
      timeoutMs: 120_000,
    }),
  );
  const [responses, runs] = await Promise.all([Promise.all(posts), Promise.all(processes)]);
  assert.deepEqual(
    responses.map((r) => r.status),
    responses.map(() => 201),
  );
  for (const run of runs) assert.equal(run.code, 0, run.stderr);

  const stored = await storedRecords(path.join(dir, 'work', 'completions.jsonl'));
  assert.equal(stored.length, POSTS + PROCESSES);
  const taskIds = stored.map((r) => r.task_id);
  assert.equal(new Set(taskIds).size, stored.length, 'no task stored twice');
  assert.equal(new Set(stored.map((r) => r.id)).size, stored.length, 'ids are unique');
  const expected = [...responses.map((r) => r.json), ...runs.map((r) => r.json)];
  const byTask = new Map(stored.map((r) => [r.task_id, r]));
  for (const ack of expected) assert.deepEqual(byTask.get(ack.task_id), ack, `acknowledged ${ack.task_id} is stored as acknowledged`);

  // The server's index learnt the CLI's writes too.
  const feed = await server.get(`/work/feed?limit=1000`);
  assert.equal(feed.json.count, POSTS + PROCESSES);
  assert.equal(feed.json.skipped_lines, 0);
});

test('concurrent retries of one completion, over HTTP and from the CLI: one record, 201 once, 200 for the rest', async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir, 'cron');
  const server = await startServer(t, dir);
  const body = completionBody('retry', { commit_sha: 'abcdef1' });
  const [responses, runs] = await Promise.all([
    Promise.all(Array.from({ length: 30 }, () => post(server.url, '/work/complete', key, body))),
    Promise.all(
      Array.from({ length: 5 }, () =>
        runEstate(['work', 'complete', '--task-id', 'T-retry', '--board', 'ops', '--assignee', 'builder', '--title', 'Task retry', '--commit-sha', 'abcdef1', '--data-dir', dir, '--json'], {
          timeoutMs: 120_000,
        }),
      ),
    ),
  ]);
  for (const run of runs) assert.equal(run.code, 0, run.stderr);
  const stored = await storedRecords(path.join(dir, 'work', 'completions.jsonl'));
  assert.equal(stored.length, 1);
  const statuses = responses.map((r) => r.status);
  assert.ok(statuses.every((s) => s === 200 || s === 201), String(statuses));
  assert.ok(statuses.filter((s) => s === 201).length <= 1);
  for (const r of [...responses.map((x) => x.json), ...runs.map((x) => x.json)]) assert.deepEqual(r, stored[0]);
});

test('concurrent registrations of pieces, over HTTP: each (target_site, slug) once', async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir, 'publisher');
  const server = await startServer(t, dir);
  const responses = await Promise.all(
    Array.from({ length: 100 }, (_, i) => server.request('POST', '/publishing/register', { body: entryBody(i % 25), headers: { 'X-API-Key': key } })),
  );
  assert.equal(responses.filter((r) => r.status === 201).length, 25);
  assert.equal(responses.filter((r) => r.status === 200).length, 75);
  const stored = await storedRecords(path.join(dir, 'publishing', 'entries.jsonl'));
  assert.equal(stored.length, 25);
  assert.equal(new Set(stored.map((r) => r.slug)).size, 25);
});
