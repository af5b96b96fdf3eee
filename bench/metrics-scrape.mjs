// `node bench/metrics-scrape.mjs`: the cost of a Prometheus scrape of
// GET /metrics (issue 26) on the big data dirs: a 1 GB trends log (7 nodes),
// a 1 M-record completions log, and a hub of BENCH_NODES nodes ×
// BENCH_POINTS points. Starts the built `estate serve` (bin/estate, or
// ESTATE_BIN) on each, times the first scrape (cold: the node index built on
// the way), waits for the server's CPU to go quiet (its background indexing
// done), then times BENCH_REQUESTS scrapes one at a time, and prints p50/p99,
// the answer's bytes and the server's RSS. It reports; it asserts nothing.
// Knobs: BENCH_NODES=100, BENCH_POINTS=10000, BENCH_REQUESTS=100.
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { completionsDir, hubDir, trendsDir } from './make-data.mjs';
import { idle, memoryMb, startServer, stopServer } from './server-process.mjs';

const root = path.resolve(import.meta.dirname, '..');
const bin = path.resolve(process.env.ESTATE_BIN ?? path.join(root, 'bin', 'estate'));
const nodes = Number(process.env.BENCH_NODES ?? 100);
const points = Number(process.env.BENCH_POINTS ?? 10_000);
const requests = Number(process.env.BENCH_REQUESTS ?? 100);
const KEY = 'bench-key';
const env = { ...process.env, ESTATE_API_KEY: KEY, NO_COLOR: '1' };

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

async function scrape(url) {
  const t0 = performance.now();
  const r = await fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${KEY}` } });
  const text = await r.text();
  const ms = performance.now() - t0;
  if (r.status !== 200) throw new Error(`/metrics: ${r.status} ${text.slice(0, 200)}`);
  return { ms, bytes: Buffer.byteLength(text), series: text.split('\n').filter((l) => l && !l.startsWith('#')).length };
}

async function measure(label, dir) {
  const server = await startServer([bin, 'serve', '--data-dir', dir, '--port', '0', '--quiet'], env);
  try {
    // The first scrape right after the start waits for what the server reads once (the series index, built
    // in the background from the start, as the first GET /nodes would); then the server is let go quiet.
    const cold = await scrape(server.url);
    await idle(server.child.pid);
    for (let i = 0; i < 10; i++) await scrape(server.url);
    const times = [];
    let last = cold;
    for (let i = 0; i < requests; i++) {
      last = await scrape(server.url);
      times.push(last.ms);
    }
    const rss = memoryMb(server.child.pid);
    return {
      'data dir': label,
      'first scrape ms': cold.ms.toFixed(1),
      'p50 ms': quantile(times, 0.5).toFixed(2),
      'p99 ms': quantile(times, 0.99).toFixed(2),
      bytes: last.bytes,
      series: last.series,
      'RSS MB': rss.VmRSS,
    };
  } finally {
    await stopServer(server);
  }
}

const rows = [];
rows.push(await measure('trends.jsonl 1 GB (7 nodes)', await trendsDir('1GB')));
rows.push(await measure('work/completions.jsonl 1 M records', await completionsDir(1_000_000)));
rows.push(await measure(`hub: ${nodes} nodes × ${points} points`, await hubDir(nodes, points)));
console.table(rows);
