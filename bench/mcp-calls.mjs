#!/usr/bin/env node
// Benchmark of the MCP face (issue 27): one read tool (trends_latest) called
// over stdio (`estate mcp`) and over /mcp (`estate serve`), beside the same
// operation over plain HTTP (GET /trends/latest), one call at a time, with the
// official SDK's 1.x client; and `estate mcp`'s start-up to a listed tool set
// (spawn, initialize, tools/list). Against the built binary, on a copy of the
// demo estate; bounded in calls and time; asserts nothing about speed.
//
//   node bench/mcp-calls.mjs [--calls 500] [--starts 10]
//
// NODE_EXTRA_CA_CERTS is unset for every child (it adds ~130 ms to a start).

import { cp, mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startEstateServe } from './server-process.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'bin', 'estate');
const { values } = parseArgs({ options: { calls: { type: 'string', default: '500' }, starts: { type: 'string', default: '10' } } });
const CALLS = Math.min(Math.max(Number(values.calls) || 500, 10), 5000);
const STARTS = Math.min(Math.max(Number(values.starts) || 10, 1), 50);
const env = { ...process.env };
delete env.NODE_EXTRA_CA_CERTS;

const temp = await mkdtemp(path.join(os.tmpdir(), 'estate-bench-mcp-'));
const dataDir = path.join(temp, 'data');
await cp(path.join(ROOT, 'fixtures', 'demo-estate'), dataDir, { recursive: true });
const apiKey = 'bench-mcp-key-0123456789abcdef';
const server = await startEstateServe(BIN, dataDir, apiKey, { ESTATE_API_KEY: apiKey });

const pct = (list, p) => list[Math.min(list.length - 1, Math.floor(p * list.length))].toFixed(2);
const report = (what, list) => {
  list.sort((a, b) => a - b);
  console.log(`  ${what.padEnd(44)} p50 ${pct(list, 0.5).padStart(7)} ms   p99 ${pct(list, 0.99).padStart(7)} ms   (${list.length} calls)`);
};
/** Times `call` CALLS times after 20 warm-up calls. */
async function timed(call) {
  for (let i = 0; i < 20; i++) await call();
  const ms = [];
  for (let i = 0; i < CALLS; i++) {
    const t0 = performance.now();
    await call();
    ms.push(performance.now() - t0);
  }
  return ms;
}

try {
  console.log(`estate MCP benchmark: trends_latest, one call at a time, demo estate, ${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(2)}`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const get = () =>
    new Promise((resolve, reject) => {
      http
        .get(`${server.url}/trends/latest`, { agent, headers: { 'X-API-Key': apiKey } }, (res) => {
          res.resume();
          res.on('end', resolve);
        })
        .on('error', reject);
    });
  report('plain HTTP: GET /trends/latest', await timed(get));

  const overHttp = new Client({ name: 'bench', version: '1.0.0' });
  await overHttp.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { 'X-API-Key': apiKey } } }));
  report('MCP over /mcp (Streamable HTTP)', await timed(() => overHttp.callTool({ name: 'trends_latest', arguments: {} })));
  await overHttp.close();

  const overStdio = new Client({ name: 'bench', version: '1.0.0' });
  await overStdio.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--data-dir', dataDir], env }));
  report('MCP over stdio (estate mcp)', await timed(() => overStdio.callTool({ name: 'trends_latest', arguments: {} })));
  await overStdio.close();

  const starts = [];
  for (let i = 0; i < STARTS; i++) {
    const t0 = performance.now();
    const client = new Client({ name: 'bench', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--data-dir', dataDir], env }));
    const { tools } = await client.listTools();
    starts.push(performance.now() - t0);
    if (tools.length < 30) throw new Error(`only ${tools.length} tools`);
    await client.close();
  }
  starts.sort((a, b) => a - b);
  console.log(`  estate mcp start-up to a listed tool set:     median ${pct(starts, 0.5)} ms, min ${starts[0].toFixed(2)}, max ${starts.at(-1).toFixed(2)} (${STARTS} starts)`);
} finally {
  server.process.kill('SIGTERM');
  await server.exited;
  await rm(temp, { recursive: true, force: true });
}
