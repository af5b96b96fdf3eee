// `node bench/node-reads.mjs`: reads of a hub's trends with many nodes
// (issue 24's goal: `/trends?limit=100` without `node` on a hub of 100
// nodes × 100,000 points at p50 ≤ 10 ms, and `?node=` as fast as on a
// single-node estate). Writes a trends.jsonl of BENCH_NODES nodes ×
// BENCH_POINTS points each, interleaved as a hub stores them (cached under
// bench/data/ or $BENCH_DATA_DIR), and a single-node log of BENCH_POINTS
// points; starts the built `estate serve` (bin/estate, or ESTATE_BIN) on each
// and times, one request at a time:
//   - GET /trends?limit=100            (every node, newest first)
//   - GET /trends?node=nK&limit=100    (one node; the index built first)
//   - the first ?node= read, while the index is not built yet (cold)
// and prints p50/p99 per route, the time to build the index (until the
// server's CPU is quiet again) and the server's RSS before and after it. It
// reports; it asserts nothing. Knobs: BENCH_NODES=100, BENCH_POINTS=100000,
// BENCH_REQUESTS=300.
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { hubDir } from './make-data.mjs';
import { idle, memoryMb, startServer, stopServer } from './server-process.mjs';

const root = path.resolve(import.meta.dirname, '..');
const bin = path.resolve(process.env.ESTATE_BIN ?? path.join(root, 'bin', 'estate'));
const nodes = Number(process.env.BENCH_NODES ?? 100);
const points = Number(process.env.BENCH_POINTS ?? 100_000);
const requests = Number(process.env.BENCH_REQUESTS ?? 300);
const KEY = 'bench-key';
const env = { ...process.env, ESTATE_API_KEY: KEY, NO_COLOR: '1' };

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

async function timed(url) {
  const t0 = performance.now();
  const r = await fetch(url, { headers: { 'X-API-Key': KEY } });
  const body = await r.json();
  const ms = performance.now() - t0;
  if (r.status !== 200) throw new Error(`${url}: ${r.status} ${JSON.stringify(body).slice(0, 200)}`);
  return { ms, body };
}

async function series(label, server, route, path) {
  for (let i = 0; i < 30; i++) await timed(server.url + path);
  const times = [];
  for (let i = 0; i < requests; i++) {
    const { ms, body } = await timed(server.url + path);
    if (body.count !== 100) throw new Error(`${path}: ${body.count} items`);
    times.push(ms);
  }
  return { log: label, route, 'p50 ms': quantile(times, 0.5).toFixed(2), 'p99 ms': quantile(times, 0.99).toFixed(2) };
}

async function measure(label, dir, node) {
  const server = await startServer([bin, 'serve', '--data-dir', dir, '--port', '0'], env);
  try {
    const rows = [await series(label, server, '/trends?limit=100 (no index)', '/trends?limit=100')];
    await idle(server.child.pid);
    const before = memoryMb(server.child.pid);
    const cold = await timed(`${server.url}/trends?node=${node}&limit=100`);
    const build = await idle(server.child.pid);
    const after = memoryMb(server.child.pid);
    rows.push(await series(label, server, '/trends?node=…&limit=100', `/trends?node=${node}&limit=100`));
    rows.push(await series(label, server, '/trends?limit=100 (index built)', '/trends?limit=100'));
    rows.push({ log: label, route: `first ?node= read ${cold.ms.toFixed(1)} ms (cold); index built in about ${build.toFixed(0)} ms`, 'p50 ms': '', 'p99 ms': `RSS ${before.VmRSS} → ${after.VmRSS} MB` });
    return rows;
  } finally {
    await stopServer(server);
  }
}

const rows = [];
rows.push(...(await measure(`1 node × ${points}`, await hubDir(1, points), 'n0')));
rows.push(...(await measure(`${nodes} nodes × ${points}`, await hubDir(nodes, points), `n${Math.floor(nodes / 2)}`)));
console.table(rows);
