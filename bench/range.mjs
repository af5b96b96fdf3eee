// `node bench/range.mjs`: the range routes of DESIGN.md 7b (issue 25's goal:
// the dashboard's range queries well under a second on a 1 GB trends log).
// Writes a trends.jsonl of BENCH_RANGE_NODES nodes sampled every 10 s up to
// now, BENCH_RANGE_SIZE bytes (default 1GB; cached under bench/data/ or
// $BENCH_DATA_DIR), times `estate rollups rebuild` on it (the offline build;
// the server's first build is the same fold), then starts the built
// `estate serve` and times, one request at a time, BENCH_REQUESTS each:
//   - 30 days, points=800 (721 hourly buckets), one node and every node (the 1h rollup)
//   - 24 hours, points=300, one node and every node (the 1m rollup)
//   - 1 hour, points=240, one node (the raw series, through the index, which the server builds in the background after the rollups: waited for here)
// and prints p50/p99 per query and the server's RSS. It reports; it asserts nothing.
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { BENCH_DATA, parseSize } from './make-data.mjs';
import { memoryMb, startServer, stopServer } from './server-process.mjs';

const root = path.resolve(import.meta.dirname, '..');
const bin = path.resolve(process.env.ESTATE_BIN ?? path.join(root, 'bin', 'estate'));
const label = process.env.BENCH_RANGE_SIZE ?? '1GB';
const nodeCount = Number(process.env.BENCH_RANGE_NODES ?? 3);
const requests = Number(process.env.BENCH_REQUESTS ?? 200);
const KEY = 'bench-key';
const env = { ...process.env, ESTATE_API_KEY: KEY, NO_COLOR: '1' };
const log = (s) => process.stderr.write(`${s}\n`);
const STEP_MS = 10_000;

async function rangeDir() {
  const dir = path.join(BENCH_DATA, `range-${nodeCount}n-${label}`);
  const file = path.join(dir, 'trends.jsonl');
  if (existsSync(path.join(dir, '.done'))) return dir;
  mkdirSync(dir, { recursive: true });
  const bytes = parseSize(label);
  // About 330 bytes a point, as the collector writes them: the count that fills `bytes`, ending now.
  const each = Math.ceil(bytes / 330 / nodeCount);
  const end = Math.floor(Date.now() / STEP_MS) * STEP_MS;
  const start = end - each * STEP_MS;
  log(`writing ${nodeCount} nodes × ${each} points (every 10 s, ${Math.round((each * STEP_MS) / 86_400_000)} days) to ${file}…`);
  const out = createWriteStream(file);
  let chunk = '';
  for (let i = 0; i < each; i++) {
    const ts = new Date(start + i * STEP_MS).toISOString();
    for (let n = 0; n < nodeCount; n++) {
      chunk += `{"ts":"${ts}","node":"n${n}","cpu_pct":${((i * 7 + n) % 1000) / 10},"load1":${((i + n) % 400) / 100},"load5":0.5,"load15":0.4,"mem_total_bytes":16777216000,"mem_used_bytes":${8000000000 + ((i * 13 + n) % 1000000)},"mem_used_pct":47.7,"mem_scope":"host","swap_used_bytes":0,"uptime_s":${i * 10},"net_rx_bytes_s":${(i * 31) % 100000},"net_tx_bytes_s":${(i * 17) % 90000}}\n`;
    }
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  out.end(chunk);
  await once(out, 'finish');
  writeFileSync(path.join(dir, '.done'), '');
  return dir;
}

const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
const ms = (x) => `${x.toFixed(1)} ms`;

async function time(url, query, n) {
  const took = [];
  let body;
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await fetch(`${url}/trends/range?${query}`, { headers: { 'X-API-Key': KEY } });
    body = await r.json();
    took.push(performance.now() - t0);
    if (r.status !== 200) throw new Error(`${query}: ${r.status} ${JSON.stringify(body)}`);
  }
  return { took, body };
}

const dir = await rangeDir();
const size = statSync(path.join(dir, 'trends.jsonl')).size;
rmSync(path.join(dir, 'rollups'), { recursive: true, force: true });
log(`rollups rebuild on ${(size / 1024 ** 3).toFixed(2)} GiB…`);
const t0 = performance.now();
const rebuilt = spawnSync(process.execPath, [bin, 'rollups', 'rebuild', '--series', 'trends', '--data-dir', dir, '--json'], { env, encoding: 'utf8' });
const buildS = (performance.now() - t0) / 1000;
if (rebuilt.status !== 0) throw new Error(rebuilt.stderr);
const built = JSON.parse(rebuilt.stdout).series.trends;

const server = await startServer([bin, 'serve', '--data-dir', dir, '--port', '0', '--quiet'], env);
const rows = [];
try {
  // The server folds what the rebuild left (nothing) and then indexes the log: wait until its CPU is quiet.
  const cpu = () => Number(readFileSync(`/proc/${server.child.pid}/stat`, 'utf8').split(') ')[1].split(' ').slice(11, 13).reduce((a, b) => a + Number(b), 0));
  const t1 = performance.now();
  for (let last = cpu(), quiet = 0; quiet < 3; ) {
    await new Promise((r) => setTimeout(r, 500));
    const now = cpu();
    quiet = now - last < 5 ? quiet + 1 : 0;
    last = now;
  }
  const indexS = (performance.now() - t1) / 1000;
  const now = Date.now();
  const iso = (t) => encodeURIComponent(new Date(t).toISOString());
  const queries = [
    ['30 days, one node', `from=30d&points=800&node=n1`],
    ['30 days, every node', `from=30d&points=800`],
    ['24 hours, one node', `from=24h&points=300&node=n1`],
    ['24 hours, every node', `from=24h&points=300`],
    ['1 hour, one node (raw)', `from=${iso(now - 3_600_000)}&to=${iso(now)}&points=240&node=n1`],
  ];
  for (const [name, query] of queries) {
    const first = await time(server.url, query, 1);
    const { took, body } = await time(server.url, query, requests);
    rows.push({ name, tier: body.tier, step_s: body.step_s, buckets: body.items.length, first: first.took[0], p50: quantile(took, 0.5), p99: quantile(took, 0.99) });
  }
  const mem = memoryMb(server.child.pid);
  console.log(`\n## Issue 25: series over a range\n`);
  console.log(`\`node bench/range.mjs\` (${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${nodeCount} nodes every 10 s, ${(size / 1024 ** 3).toFixed(2)} GiB trends.jsonl, ${built.records} points; ${requests} requests per query, one at a time)\n`);
  console.log(`- \`estate rollups rebuild\` (1m and 1h buckets of the whole log): ${buildS.toFixed(1)} s, ${built.periods} period files`);
  console.log(`- the server's start, its rollups pass and the log's index in the background, until its CPU is quiet: ${indexS.toFixed(1)} s`);
  console.log(`- server RSS after the queries: ${mem.VmRSS} MB (peak ${mem.VmHWM} MB)\n`);
  console.log('| query | tier | step | buckets | first | p50 | p99 |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.name} | ${r.tier} | ${r.step_s} s | ${r.buckets} | ${ms(r.first)} | ${ms(r.p50)} | ${ms(r.p99)} |`);
} finally {
  await stopServer(server);
}
