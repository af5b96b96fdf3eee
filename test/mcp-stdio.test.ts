import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { operationId } from '../src/api/openapi.ts';
import { operations } from '../src/api/operations/index.ts';
import { createKey } from '../src/core/keys/key-store.ts';
import { LEFT_OUT } from '../src/mcp/operation-tools.ts';
import { BIN, cliEnv, runEstate } from './helpers/cli.ts';
import { DEMO_FIXTURE, tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';

// `estate mcp` (issue 27) as an agent meets it: the real binary on stdio,
// spoken to by the MCP SDK's own client; its answers compared with the HTTP
// API's for the same operation over the same data dir.

async function connect(t: TestContext, args: string[]): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', ...args], env: cliEnv(), stderr: 'pipe' });
  const client = new Client({ name: 'estate-test', version: '1.0.0' });
  await client.connect(transport);
  t.after(() => client.close());
  return client;
}

type ToolResult = { content: { type: string; text: string }[]; structuredContent?: unknown; isError?: boolean };

test('tools/list has one tool per operation of the table, each named by its operationId with its fields, unless the operation is left out for a reason', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const client = await connect(t, ['--data-dir', dir]);
  const { tools } = await client.listTools();
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  for (const op of operations) {
    const tool = byName.get(operationId(op));
    if (op.id in LEFT_OUT) {
      assert.equal(tool, undefined, `${op.id} is left out`);
      continue;
    }
    assert.ok(tool, `operation ${op.id} has no tool and no reason to be left out (LEFT_OUT in src/mcp/operation-tools.ts)`);
    const fields = [op.input.path, op.input.query, op.input.body].flatMap((s) => Object.keys(s?.shape ?? {}));
    assert.deepEqual(Object.keys((tool.inputSchema.properties ?? {}) as object).sort(), fields.sort(), `${op.id}: its tool takes its fields`);
    assert.equal(tool.annotations?.readOnlyHint, op.method === 'GET', `${op.id}: read-only when a GET`);
    assert.ok(tool.description?.startsWith(op.summary), op.id);
  }
  // And one more: next_page, for answers cut at 64 KB.
  assert.ok(byName.has('next_page'));
  assert.equal(tools.length, operations.length - Object.keys(LEFT_OUT).length + 1);
});

test('a read tool answers what the HTTP API answers; a write tool records a completion the feed shows; a bad argument is the CLI\'s message as a tool error', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const client = await connect(t, ['--data-dir', dir]);

  for (const [name, args, route] of [
    ['trends_list', { limit: 5 }, '/trends?limit=5'],
    ['disk_latest', {}, '/disk/latest'],
    ['work_feed', { limit: 3, board: 'ops' }, '/work/feed?limit=3&board=ops'],
    ['state_get', { file_name: 'heartbeat' }, '/state/heartbeat'],
  ] as const) {
    const result = (await client.callTool({ name, arguments: args })) as ToolResult;
    assert.equal(result.isError, undefined, `${name}: ${result.content[0]?.text}`);
    const http = await server.get(route, { 'X-API-Key': key });
    assert.equal(http.status, 200, route);
    assert.deepEqual(result.structuredContent, http.json, name);
    assert.deepEqual(JSON.parse(result.content[0]?.text ?? ''), http.json, `${name}: its text is the same JSON`);
  }

  const done = (await client.callTool({ name: 'work_complete', arguments: { board: 'ops', task_id: 'MCP-1', assignee: 'agent', title: 'Recorded over MCP' } })) as ToolResult;
  assert.equal(done.isError, undefined, done.content[0]?.text);
  const feed = await server.get('/work/feed?board=ops&limit=1');
  assert.equal(feed.json.items[0].task_id, 'MCP-1');
  assert.deepEqual(feed.json.items[0], done.structuredContent);

  const bad = (await client.callTool({ name: 'trends_list', arguments: { limit: 'many' } })) as ToolResult;
  assert.equal(bad.isError, true);
  const cli = await runEstate(['trends', '--limit', 'many', '--data-dir', dir]);
  assert.equal(cli.code, 2);
  assert.equal(`estate: ${bad.content[0]?.text}\n`, cli.stderr, 'the message the CLI prints');
  // A misspelt argument of a read is refused by name, not dropped.
  const misspelt = (await client.callTool({ name: 'trends_list', arguments: { lmit: 5 } })) as ToolResult;
  assert.equal(misspelt.isError, true);
  assert.match(misspelt.content[0]?.text ?? '', /^invalid --lmit: Extra inputs are not permitted: trends_list takes limit/);
  const missing = (await client.callTool({ name: 'work_complete', arguments: { board: 'ops' } })) as ToolResult;
  assert.equal(missing.isError, true);
  assert.match(missing.content[0]?.text ?? '', /^missing --task-id, --assignee, --title$/);
});

test('estate mcp --url calls the server with its key: a read-only key cannot call a write tool, and nothing is written', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const server = await startServer(t, dir);
  const reader = (await createKey(dir, { userId: 'viewer', scopes: ['read'] })).key;
  const client = await connect(t, ['--url', server.url, '--api-key', reader]);
  const read = (await client.callTool({ name: 'summary_get', arguments: {} })) as ToolResult;
  assert.equal(read.isError, undefined, read.content[0]?.text);
  const write = (await client.callTool({ name: 'work_complete', arguments: { board: 'ops', task_id: 'MCP-2', assignee: 'agent', title: 'refused' } })) as ToolResult;
  assert.equal(write.isError, true);
  const cli = await runEstate(['work', 'complete', '--board', 'ops', '--task-id', 'MCP-2', '--assignee', 'agent', '--title', 'refused', '--url', server.url, '--api-key', reader]);
  assert.equal(cli.code, 4);
  assert.equal(`estate: ${write.content[0]?.text}\n`, cli.stderr, 'the message the CLI prints');
  const feed = await server.get('/work/feed?limit=100');
  assert.ok(!feed.json.items.some((i: { task_id: string }) => i.task_id === 'MCP-2'));
});

test('estate mcp with a bad --user, --user with --url, or no data dir is exit 2 with one line, before it speaks', async (t) => {
  const dir = await tempDataDir(t);
  const bad = await runEstate(['mcp', '--data-dir', dir, '--user', 'bad user!'], { input: '' });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^estate: --user: invalid user "bad user!"[^\n]*\n$/);
  assert.equal(bad.stdout, '');
  const remote = await runEstate(['mcp', '--url', 'http://127.0.0.1:9', '--user', 'alice'], { input: '' });
  assert.equal(remote.code, 2);
  assert.equal(remote.stderr, 'estate: --user is for the local data dir: with --url the credential decides the user\n');
  const missing = await runEstate(['mcp', '--data-dir', `${dir}-missing`], { input: '' });
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /^estate: data directory .* does not exist[^\n]*\n$/);
});

test('a client that closes stdin right after its last request still gets every answer', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const lines = [
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } } },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'trends_latest', arguments: {} } },
    { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'work_feed', arguments: { limit: 2 } } },
  ];
  const r = await runEstate(['mcp', '--data-dir', dir], { input: lines.map((l) => JSON.stringify(l)).join('\n') + '\n' });
  assert.equal(r.code, 0, r.stderr);
  const answers = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: number; result?: { isError?: boolean } });
  assert.deepEqual(answers.map((a) => a.id).sort(), [1, 2, 3]);
  assert.ok(answers.every((a) => a.result && !a.result.isError), r.stdout.slice(0, 300));
});
