import assert from 'node:assert/strict';
import { appendFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';

// A dashboard polls the aggregates (and the build digests) with If-None-Match: while the data behind
// them is unchanged it gets 304, although each answer's generation time,
// uptime, live runtime or moving window differ; a new record changes the tag.

const ROUTES = ['/summary', '/api/garden', '/estate/status', '/estate/agents', '/builds', '/builds/recent'];

test('the dashboard aggregates keep their ETag while the data is unchanged, and change it with the data', async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir);
  let now = new Date('2026-11-26T10:00:00.000Z');
  const server = await startServer(t, dir, { now: () => now });
  const headers = { 'X-API-Key': key };
  const write = async (taskId: string) => {
    const r = await server.request('POST', '/work/complete', { headers, body: { task_id: taskId, board: 'ops', assignee: 'ana', title: `task ${taskId}` } });
    assert.equal(r.status, 201, r.text);
  };
  await write('T-1');
  await appendFile(path.join(dir, 'health-pulse.jsonl'), `${JSON.stringify({ ts: now.toISOString(), status: 'healthy' })}\n`);

  for (const route of ROUTES) {
    await t.test(route, async () => {
      const first = await server.get(route, headers);
      assert.equal(first.status, 200, first.text);
      const tag = first.headers.get('etag');
      assert.match(tag ?? '', /^W\/"[\w-]+"$/, 'a weak tag: the bytes of the volatile fields are not in it');

      now = new Date(now.getTime() + 61_000);
      const later = await server.get(route, headers);
      assert.equal(later.headers.get('etag'), tag, 'the same data, a minute later: the same tag');
      if (route === '/summary' || route === '/api/garden') assert.notEqual(later.json.generated_at, first.json.generated_at, 'the volatile field did change');
      if (route.startsWith('/builds')) assert.notEqual(later.json.until, first.json.until, 'the window did move');

      const unchanged = await server.get(route, { ...headers, 'If-None-Match': tag as string });
      assert.equal(unchanged.status, 304);
      assert.equal(unchanged.text, '');

      if (route.startsWith('/builds')) await appendFile(path.join(dir, 'builds.jsonl'), `${JSON.stringify({ ts: now.toISOString(), project: route, status: 'success' })}\n`);
      else await write(`T-${route}`);
      const changed = await server.get(route, { ...headers, 'If-None-Match': tag as string });
      assert.equal(changed.status, 200, `${route}: a new completion changes the answer`);
      assert.notEqual(changed.headers.get('etag'), tag);
    });
  }

  // Other reads keep their strong tag of the bytes.
  const feed = await server.get('/work/feed', headers);
  assert.match(feed.headers.get('etag') ?? '', /^"[\w-]+"$/);
  assert.equal((await server.get('/work/feed', { ...headers, 'If-None-Match': `W/${feed.headers.get('etag')}` })).status, 304, 'If-None-Match compares weakly');
});
