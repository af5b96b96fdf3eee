import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { operationId } from '../src/api/openapi.ts';
import { operations } from '../src/api/operations/index.ts';
import { LEFT_OUT } from '../src/mcp/operation-tools.ts';
import { BIN, cliEnv } from './helpers/cli.ts';
import { DEMO_FIXTURE, tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';
import { PATIENCE_MS } from './helpers/wait-until.ts';

// The MCP Inspector's CLI (@modelcontextprotocol/inspector-cli, the one that
// runs on Node 20) lists the tools of `estate mcp` over stdio and of /mcp
// over HTTP, and calls one.

const run = promisify(execFile);
// Its entry reads its own package.json by a path relative to the working directory: run it from its folder.
const INSPECTOR = path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli/build/index.js'));
const expected = [...operations.filter((op) => !(op.id in LEFT_OUT)).map(operationId), 'next_page'].sort();

async function inspector(args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await run(process.execPath, ['index.js', ...args], { cwd: INSPECTOR, env: cliEnv(), timeout: PATIENCE_MS });
  return JSON.parse(stdout);
}

test('the MCP Inspector CLI lists every tool of estate mcp over stdio and calls one', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const listed = await inspector([process.execPath, BIN, 'mcp', '--data-dir', dir, '--method', 'tools/list']);
  assert.deepEqual((listed.tools as { name: string }[]).map((tool) => tool.name).sort(), expected);
  const called = await inspector([process.execPath, BIN, 'mcp', '--data-dir', dir, '--method', 'tools/call', '--tool-name', 'trends_latest']);
  assert.equal((called.structuredContent as { node: string }).node, 'forge');
});

test('the MCP Inspector CLI lists every tool of /mcp over HTTP with a key', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const server = await startServer(t, dir);
  const key = await newKey(dir);
  const listed = await inspector([`${server.url}/mcp`, '--transport', 'http', '--header', `X-API-Key: ${key}`, '--method', 'tools/list']);
  assert.deepEqual((listed.tools as { name: string }[]).map((tool) => tool.name).sort(), expected);
});
