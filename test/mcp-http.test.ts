import assert from 'node:assert/strict';
import { appendFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { operationId } from '../src/api/openapi.ts';
import { operations } from '../src/api/operations/index.ts';
import { createKey } from '../src/core/keys/key-store.ts';
import { PAGE_BYTES } from '../src/mcp/answer-pages.ts';
import { LEFT_OUT } from '../src/mcp/operation-tools.ts';
import { DEMO_FIXTURE, tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer, type TestServer } from './helpers/server.ts';

// POST /mcp on the real server (issue 27): the SDK's own client over the
// Streamable HTTP transport, with the credentials, scopes and users of the
// HTTP API; answers compared with the HTTP API's for the same operation.

type ToolResult = { content: { type: string; text: string }[]; structuredContent?: unknown; isError?: boolean; _meta?: Record<string, unknown> };

async function connect(t: TestContext, server: TestServer, key?: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: key ? { 'X-API-Key': key } : {} } });
  const client = new Client({ name: 'estate-test', version: '1.0.0' });
  await client.connect(transport);
  t.after(() => client.close());
  return client;
}

test('/mcp: a key sees the tools it may call over HTTP; a read-only key cannot call a write tool; no key sees the public tools; an invalid key is 403', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const lines: Record<string, unknown>[] = [];
  const server = await startServer(t, dir, { log: (line) => lines.push(line) });
  const full = await newKey(dir);
  const reader = (await createKey(dir, { userId: 'viewer', scopes: ['read'] })).key;

  const names = async (key?: string) => (await (await connect(t, server, key)).listTools()).tools.map((tool) => tool.name).sort();
  const offered = operations.filter((op) => !(op.id in LEFT_OUT));
  assert.deepEqual(await names(full), [...offered.map(operationId), 'next_page'].sort());
  assert.deepEqual(await names(reader), [...offered.filter((op) => op.method === 'GET').map(operationId), 'next_page'].sort());
  assert.deepEqual(await names(), [...offered.filter((op) => op.access === 'public' || (op.access === 'user' && op.method === 'GET')).map(operationId), 'next_page'].sort());

  const asReader = await connect(t, server, reader);
  const refused = (await asReader.callTool({ name: 'work_complete', arguments: { board: 'ops', task_id: 'MCP-R', assignee: 'agent', title: 'refused' } })) as ToolResult;
  assert.equal(refused.isError, true);
  const http = await server.request('POST', '/work/complete', { headers: { 'X-API-Key': reader }, body: { board: 'ops', task_id: 'MCP-R', assignee: 'agent', title: 'refused' } });
  assert.equal(http.status, 403);
  assert.equal(refused.content[0]?.text, http.json.detail, "the HTTP API's 403 message");
  assert.ok(!(await server.get('/work/feed?limit=100')).json.items.some((i: { task_id: string }) => i.task_id === 'MCP-R'));

  const bad = await fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: { 'X-API-Key': 'est_notakey', 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  assert.equal(bad.status, 403);
  assert.deepEqual(await bad.json(), { detail: 'Invalid credential' });
  // What the transport refuses is said as every route says an error.
  const unacceptable = await fetch(`${server.url}/mcp`, { method: 'POST', headers: { 'X-API-Key': full, 'Content-Type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
  assert.equal(unacceptable.status, 406);
  assert.match(((await unacceptable.json()) as { detail: string }).detail, /must accept both application\/json and text\/event-stream/);
  const get = await fetch(`${server.url}/mcp`, { headers: { 'X-API-Key': full } });
  assert.equal(get.status, 405);
  assert.equal(get.headers.get('allow'), 'POST');
  // Logged as every request is, with its user.
  assert.ok(lines.some((l) => l.path === '/mcp' && l.method === 'POST' && l.status === 200 && l.user === 'viewer'), JSON.stringify(lines.filter((l) => l.path === '/mcp')));
});

test('/mcp: a read tool answers what the HTTP API answers; a completion recorded over MCP is in the feed; training runs stay their user\'s', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const server = await startServer(t, dir);
  const alice = await newKey(dir, 'alice');
  const bob = await newKey(dir, 'bob');
  const client = await connect(t, server, alice);
  for (const [name, args, route] of [
    ['summary_get', {}, '/summary'],
    ['events_list', { limit: 10 }, '/events?limit=10'],
    ['nodes_list', {}, '/nodes'],
  ] as const) {
    const result = (await client.callTool({ name, arguments: args })) as ToolResult;
    assert.equal(result.isError, undefined, `${name}: ${result.content[0]?.text}`);
    const http = await server.get(route, { 'X-API-Key': alice });
    assert.deepEqual(stable(result.structuredContent), stable(http.json), name);
  }
  const done = (await client.callTool({ name: 'work_complete', arguments: { board: 'ops', task_id: 'MCP-H', assignee: 'agent', title: 'over HTTP' } })) as ToolResult;
  assert.equal(done.isError, undefined, done.content[0]?.text);
  assert.deepEqual((await server.get('/work/feed?limit=1')).json.items[0], done.structuredContent);

  const started = (await client.callTool({ name: 'training_start', arguments: { name: 'alice-run', model: 'small' } })) as ToolResult;
  assert.equal(started.isError, undefined, started.content[0]?.text);
  const runId = (started.structuredContent as { run_id: string }).run_id;
  const asBob = await connect(t, server, bob);
  const bobs = (await asBob.callTool({ name: 'training_get', arguments: { run_id: runId } })) as ToolResult;
  assert.equal(bobs.isError, true, 'bob cannot read alice\'s run');
  const bobsList = (await asBob.callTool({ name: 'training_list', arguments: {} })) as ToolResult;
  assert.ok(!bobsList.content[0]?.text.includes(runId));
  const alices = (await client.callTool({ name: 'training_get', arguments: { run_id: runId } })) as ToolResult;
  assert.equal((alices.structuredContent as { run_id: string }).run_id, runId);
});

/** A body without the fields that change on every call (generated_at, uptime). */
function stable(body: unknown): unknown {
  return JSON.parse(JSON.stringify(body, (k, v) => (k === 'generated_at' || k === 'uptime_s' || k === 'runtime' ? undefined : v)));
}

test('/mcp: an answer over 64 KB comes in pages under 64 KB with a cursor; next_page gives the rest of that answer, and only to its key', async (t) => {
  const dir = await tempDataDir(t);
  // 1,000 trend points of ~300 bytes each: a 300 KB answer.
  const lines = Array.from({ length: 1000 }, (_, i) => JSON.stringify({ ts: new Date(Date.UTC(2026, 10, 1) + i * 60_000).toISOString(), node: 'big', cpu_pct: i % 100, note: 'x'.repeat(240) }));
  await appendFile(path.join(dir, 'trends.jsonl'), `${lines.join('\n')}\n`);
  const server = await startServer(t, dir);
  const key = await newKey(dir);
  const other = await newKey(dir, 'other');
  const client = await connect(t, server, key);
  const http = await server.get('/trends?limit=1000', { 'X-API-Key': key });
  assert.equal(http.json.items.length, 1000);

  const items: unknown[] = [];
  let result = (await client.callTool({ name: 'trends_list', arguments: { limit: 1000 } })) as ToolResult;
  const firstCursor = result._meta?.['estate/next_cursor'] as string;
  assert.equal(typeof firstCursor, 'string');
  const asOther = await connect(t, server, other);
  const stolen = (await asOther.callTool({ name: 'next_page', arguments: { cursor: firstCursor } })) as ToolResult;
  assert.equal(stolen.isError, true, "another key cannot page through this key's answer");
  for (let pages = 1; ; pages++) {
    assert.ok(Buffer.byteLength(result.content[0]?.text ?? '') <= PAGE_BYTES, `page ${pages} is within 64 KB`);
    const page = result.structuredContent as { items: unknown[]; count: number };
    assert.equal(page.count, page.items.length);
    items.push(...page.items);
    const cursor = result._meta?.['estate/next_cursor'] as string | undefined;
    if (!cursor) break;
    assert.match(result.content[1]?.text ?? '', /call next_page with \{"cursor": "/);
    assert.ok(pages < 20, 'the pages end');
    result = (await client.callTool({ name: 'next_page', arguments: { cursor } })) as ToolResult;
  }
  assert.deepEqual(items, http.json.items, 'the pages are the answer, in order, each item once');
  const spent = (await client.callTool({ name: 'next_page', arguments: { cursor: firstCursor } })) as ToolResult;
  assert.equal(spent.isError, true, 'a cursor serves once');
});

test('/mcp: resources are the state files, the OpenAPI document and the health, as the HTTP API answers them; the daily briefing gathers summary, events and builds', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const server = await startServer(t, dir);
  const key = await newKey(dir);
  const client = await connect(t, server, key);
  const { resources } = await client.listResources();
  assert.deepEqual(resources.map((r) => r.uri).sort(), ['estate://health', 'estate://openapi', 'estate://state/estate_map', 'estate://state/heartbeat', 'estate://state/scoreboard']);
  const read = async (uri: string) => JSON.parse(((await client.readResource({ uri })).contents[0] as { text: string }).text);
  assert.deepEqual(await read('estate://state/heartbeat'), (await server.get('/state/heartbeat', { 'X-API-Key': key })).json);
  assert.deepEqual(await read('estate://openapi'), (await server.get('/api/openapi.json')).json);
  assert.equal((await read('estate://health')).status, (await server.get('/health')).json.status);
  const { resourceTemplates } = await client.listResourceTemplates();
  assert.deepEqual(resourceTemplates.map((r) => r.uriTemplate), ['estate://state/{name}']);

  const { prompts } = await client.listPrompts();
  assert.deepEqual(prompts.map((p) => p.name), ['daily_briefing']);
  const prompt = await client.getPrompt({ name: 'daily_briefing' });
  const text = (prompt.messages[0]?.content as { text: string }).text;
  const summary = (await server.get('/summary', { 'X-API-Key': key })).json;
  const section = /## The estate at a glance \(GET \/summary\)\n(.*)\n/.exec(text)?.[1];
  assert.ok(section, text.slice(0, 400));
  assert.deepEqual(stable(JSON.parse(section)), stable(summary), 'the summary, as GET /summary answers it');
  assert.match(text, /## The newest events \(GET \/events\?limit=50\)\n\{"items":/);
  assert.match(text, /## Builds of the last day \(GET \/builds\?days=1\)\n\{/);

  // Without a credential the state files cannot be read, as over HTTP.
  const anonymous = await connect(t, server);
  await assert.rejects(anonymous.readResource({ uri: 'estate://state/heartbeat' }), /Not authenticated/);
});

test('/mcp is rate-limited as the API is: per credential, 429 with Retry-After once its bucket is empty', async (t) => {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ serve: { rate_limit: { requests_per_minute: 1, burst: 1, exempt_loopback: false } } }));
  const server = await startServer(t, dir);
  const [first, second] = [await newKey(dir, 'first'), await newKey(dir, 'second')];
  const post = (key: string) =>
    fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
  assert.equal((await post(first)).status, 200);
  const limited = await post(first);
  assert.equal(limited.status, 429);
  assert.ok(Number(limited.headers.get('retry-after')) > 0);
  assert.equal((await post(second)).status, 200, "another credential's bucket is its own");
});
