#!/usr/bin/env node
// Benchmark of reads on a hub holding many nodes: `/trends?limit=100` (every
// node, merged newest first) and `/trends?node=NAME&limit=100` (one node) on
// a trends log of NODES × POINTS points, the nodes interleaved as a hub
// stores them, beside `?node=` on a single-node estate of POINTS points.
//
//   node bench/many-nodes.mjs [--nodes 100] [--points 100000] [--seconds 5]
//
// The logs are generated once and cached (bench/make-data.mjs: bench/data/
// or $BENCH_DATA_DIR). Starts `bin/estate serve` on 127.0.0.1 over each,
// reads one node's page once and times that first answer (the per-node
// index is built from the log then), then drives each route with
// autocannon (10 connections) for SECONDS. Reports p50 and p99 latency,
// requests/s and the server's RSS; asserts nothing. Not part of `npm test`.

import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { nodesDir } from './make-data.mjs';
import { memoryMb, startServer, stopServer } from './server-process.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'bin', 'estate');
const { values } = parseArgs({
  options: {
    nodes: { type: 'string', default: '100' },
    points: { type: 'string', default: '100000' },
    seconds: { type: 'string', default: '5' },
  },
});
const NODES = Math.min(Math.max(Number(values.nodes) || 100, 1), 1000);
const POINTS = Math.min(Math.max(Number(values.points) || 100_000, 1), 1_000_000);
const SECONDS = Math.min(Math.max(Number(values.seconds) || 5, 1), 60);
const KEY = 'bench-key';
const env = { ...process.env, ESTATE_API_KEY: KEY, NO_COLOR: '1' };
delete env.NODE_EXTRA_CA_CERTS;
const log = (s) => process.stderr.write(`${s}\n`);

async function drive(url) {
  const r = await autocannon({ url, connections: 10, duration: SECONDS, headers: { 'X-API-Key': KEY } });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.non2xx };
}

async function measure(label, dir, node) {
  const server = await startServer([BIN, 'serve', '--data-dir', dir, '--port', '0', '--config', path.join(ROOT, 'bench', 'estate-bench.config.json')], env);
  try {
    const t0 = performance.now();
    const first = await fetch(`${server.url}/trends?node=${node}&limit=100`, { headers: { 'X-API-Key': KEY } });
    const page = await first.json();
    const firstMs = performance.now() - t0;
    if (page.count !== 100 || page.items.some((p) => p.node !== node)) throw new Error(`${label}: ?node=${node} answered ${page.count} points, not 100 of that node`);
    const rows = [];
    for (const route of ['/trends?limit=100', `/trends?node=${node}&limit=100`]) {
      await autocannon({ url: server.url + route, connections: 10, duration: 1, headers: { 'X-API-Key': KEY } });
      const r = await drive(server.url + route);
      log(`  ${label} ${route}: p50 ${r.p50} ms, p99 ${r.p99} ms, ${Math.round(r.rps)} req/s`);
      rows.push({ label, route, ...r });
    }
    return { rows, firstMs, memory: memoryMb(server.child.pid) };
  } finally {
    await stopServer(server);
  }
}

log(`preparing ${NODES} nodes × ${POINTS} points…`);
const many = await nodesDir(NODES, POINTS);
log('preparing one node…');
const one = await nodesDir(1, POINTS);
const hub = await measure(`${NODES} nodes`, many, `node-${String(Math.floor(NODES / 2)).padStart(3, '0')}`);
const single = await measure('1 node', one, 'node-000');

console.log(`estate reads with many nodes: ${NODES} nodes × ${POINTS} points (interleaved), beside 1 node × ${POINTS} points; autocannon, 10 connections, ${SECONDS}s`);
console.log('| estate holding | route | p50 ms | p99 ms | req/s | errors |');
console.log('|---|---|---|---|---|---|');
for (const r of [...hub.rows, ...single.rows]) console.log(`| ${r.label} | \`${r.route}\` | ${r.p50} | ${r.p99} | ${Math.round(r.rps)} | ${r.errors} |`);
console.log(`first \`?node=\` answer after start (the per-node index built from the log): ${NODES} nodes ${Math.round(hub.firstMs)} ms, 1 node ${Math.round(single.firstMs)} ms`);
console.log(`server RSS after the load: ${NODES} nodes ${hub.memory.VmRSS} MB (peak ${hub.memory.VmHWM}), 1 node ${single.memory.VmRSS} MB (peak ${single.memory.VmHWM})`);
