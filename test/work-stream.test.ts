import assert from 'node:assert/strict';
import { appendFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { createContext } from '../src/api/context.ts';
import { loadConfig } from '../src/config.ts';
import { createApp } from '../src/server/create-app.ts';
import { listen } from '../src/server/listen.ts';
import { createWorkStream } from '../src/server/work-stream.ts';
import { runEstate } from './helpers/cli.ts';
import { DEMO_FIXTURE, tempDataDir } from './helpers/data-dir.ts';
import { completionBody } from './helpers/records.ts';
import { newKey, startServer } from './helpers/server.ts';
import { openStream } from './helpers/sse.ts';

// GET /work/stream: server-sent events of new completions, whoever writes them.

function completeArgs(id: string, board = 'ops'): string[] {
  return ['work', 'complete', '--task-id', id, '--board', board, '--assignee', 'cron', '--title', `Task ${id}`];
}

test('a completion recorded by the CLI arrives on an open stream, with its id', async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const stream = await openStream(t, `${server.url}/work/stream`);
  assert.equal(stream.status, 200);
  assert.equal(stream.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  assert.equal(stream.headers.get('cache-control'), 'no-store');

  const cli = await runEstate([...completeArgs('T-cli'), '--json', '--data-dir', dir]);
  assert.equal(cli.code, 0, cli.stderr);
  const [first] = await stream.waitForEvents(1);
  assert.deepEqual(first, { event: 'completion', id: cli.json.id, data: JSON.stringify(cli.json) });

  const posted = await server.request('POST', '/work/complete', { body: completionBody('http'), headers: { 'X-API-Key': key } });
  assert.equal(posted.status, 201);
  const events = await stream.waitForEvents(2);
  assert.deepEqual(JSON.parse(events[1]?.data ?? ''), posted.json);
  // A replay is not a new completion.
  await server.request('POST', '/work/complete', { body: completionBody('http'), headers: { 'X-API-Key': key } });
  const third = await runEstate([...completeArgs('T-third'), '--data-dir', dir]);
  assert.equal(third.code, 0);
  const all = await stream.waitForEvents(3);
  assert.deepEqual(all.map((e) => JSON.parse(e.data).task_id), ['T-cli', 'T-http', 'T-third']);
});

test('resume with Last-Event-ID or ?after=, and filter with ?board=', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const server = await startServer(t, dir);
  const feed = (await server.get('/work/feed?limit=4')).json.items as { id: string; board: string }[];
  const oldestOfFour = feed[3]?.id as string;
  const cases: [string, string, Record<string, string>, string[]][] = [
    ['Last-Event-ID', '/work/stream', { 'Last-Event-ID': oldestOfFour }, feed.slice(0, 3).map((c) => c.id).reverse()],
    ['?after=', `/work/stream?after=${oldestOfFour}`, {}, feed.slice(0, 3).map((c) => c.id).reverse()],
    ['Last-Event-ID wins over ?after=', `/work/stream?after=${feed[1]?.id}`, { 'Last-Event-ID': oldestOfFour }, feed.slice(0, 3).map((c) => c.id).reverse()],
    [
      '?after= with ?board=',
      `/work/stream?after=${oldestOfFour}&board=${feed[0]?.board}`,
      {},
      feed.slice(0, 3).filter((c) => c.board === feed[0]?.board).map((c) => c.id).reverse(),
    ],
  ];
  for (const [name, route, headers, ids] of cases) {
    await t.test(name, async () => {
      const stream = await openStream(t, server.url + route, headers);
      const events = await stream.waitForEvents(ids.length);
      assert.deepEqual(events.map((e) => e.id), ids);
      stream.close();
    });
  }
  await t.test('?after=start replays the log, the newest 1000 at most', async () => {
    const stream = await openStream(t, `${server.url}/work/stream?after=start&board=research`);
    const research = (await server.get('/work/feed?board=research&limit=1000')).json.items as { id: string }[];
    const events = await stream.waitForEvents(research.length);
    assert.deepEqual(events.map((e) => e.id), research.map((c) => c.id).reverse());
    stream.close();
  });
  await t.test('an unknown id replays nothing, then streams what is new', async () => {
    const stream = await openStream(t, `${server.url}/work/stream?after=wc_unknown`);
    const cli = await runEstate([...completeArgs('T-new'), '--json', '--data-dir', dir]);
    const events = await stream.waitForEvents(1);
    assert.deepEqual(events.map((e) => e.id), [cli.json.id]);
    stream.close();
  });
});

test('a stream of one board skips the others; a corrupt line in the log is skipped, not fatal', async (t) => {
  const dir = await tempDataDir(t);
  const server = await startServer(t, dir);
  const stream = await openStream(t, `${server.url}/work/stream?board=garden`);
  await runEstate([...completeArgs('T-ops', 'ops'), '--data-dir', dir]);
  await appendFile(path.join(dir, 'work', 'completions.jsonl'), 'not json\n{"id":"half');
  const garden = await runEstate([...completeArgs('T-garden', 'garden'), '--json', '--data-dir', dir]);
  const events = await stream.waitForEvents(1);
  assert.deepEqual(events.map((e) => e.id), [garden.json.id]);
  const feed = await server.get('/work/feed');
  assert.equal(feed.json.count, 2);
  assert.equal(feed.json.skipped_lines, 2);
});

test('bad stream parameters are 422; HEAD answers the headers only', async (t) => {
  const server = await startServer(t, await tempDataDir(t));
  for (const query of ['board=Not%20A%20Slug', `after=${'x'.repeat(129)}`]) {
    await t.test(query, async () => {
      const r = await server.get(`/work/stream?${query}`);
      assert.equal(r.status, 422);
      assert.equal(r.json.detail[0].loc[0], 'query');
    });
  }
  const head = await server.request('HEAD', '/work/stream');
  assert.equal(head.status, 200);
  assert.equal(head.text, '');
});

test('closing the server ends open streams, so the close finishes', async (t) => {
  const dir = await tempDataDir(t);
  const app = createApp(createContext(dir, loadConfig(dir), {}));
  const running = await listen(app, { host: '127.0.0.1', port: 0 });
  t.after(() => running.close());
  const streams = await Promise.all([openStream(t, `${running.url}/work/stream`), openStream(t, `${running.url}/work/stream?board=ops`)]);
  await app.closeStreams();
  await running.close();
  await app.close();
  await Promise.all(streams.map((s) => s.ended));
  const refused = await fetch(`${running.url}/work/stream`).catch((err: Error) => err);
  assert.ok(refused instanceof Error, 'the server no longer listens');
});

test('idle streams get a heartbeat comment', async (t) => {
  const dir = await tempDataDir(t);
  const stream = createWorkStream(createContext(dir, loadConfig(dir), {}), { heartbeatMs: 50 });
  const running = await listen((req, res) => stream.route.handle(req, res, {}), { host: '127.0.0.1', port: 0 });
  t.after(async () => {
    await stream.close();
    await running.close();
  });
  const controller = new AbortController();
  t.after(() => controller.abort());
  // Not a timing assertion: only a bound, so a missing heartbeat fails instead of hanging.
  setTimeout(() => controller.abort(), 10_000).unref();
  const res = await fetch(running.url, { signal: controller.signal });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  let text = '';
  while (!text.includes(': ping\n\n')) {
    const { value, done } = await reader.read();
    assert.equal(done, false, `stream ended before a heartbeat: ${text}`);
    text += new TextDecoder().decode(value);
  }
  assert.match(text, /^retry: 3000\n\n(: ping\n\n)+$/);
});
