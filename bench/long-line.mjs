// A line with no end must cost what its bytes cost. For each size (default
// 1, 4 and 16 MB; BENCH_LINE_SIZES=1,4,16,64) builds a data dir whose
// completions and trends logs hold 100 points and then one line of that size
// with no newline, then times the public GET /estate/status and GET
// /trends?limit=100 on a real `estate serve`. Reading backwards passes over
// the long line without assembling it, so the time should grow linearly with
// its size (it grew with its square before). It reports; it asserts nothing.
// `ESTATE_ROOT=/path/to/checkout` times another build of estate.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { BENCH_DATA } from './make-data.mjs';
import { startServer, stopServer } from './server-process.mjs';

const root = path.resolve(process.env.ESTATE_ROOT ?? path.join(import.meta.dirname, '..'));
const bin = path.join(root, 'bin', 'estate');
const sizes = (process.env.BENCH_LINE_SIZES ?? '1,4,16').split(',').map(Number);
const KEY = 'bench-key';
const env = { ...process.env, ESTATE_API_KEY: KEY, NO_COLOR: '1' };
delete env.NODE_EXTRA_CA_CERTS;
const MB = 1024 * 1024;

function dataDir(mb) {
  const dir = path.join(BENCH_DATA, `long-line-${mb}MB`);
  mkdirSync(path.join(dir, 'work'), { recursive: true });
  const start = Date.parse('2026-01-01T00:00:00Z');
  const points = Array.from({ length: 100 }, (_, i) => JSON.stringify({ ts: new Date(start + i * 1000).toISOString(), cpu_pct: i }));
  const completions = Array.from({ length: 100 }, (_, i) =>
    JSON.stringify({ id: `wc_${String(i).padStart(16, '0')}`, task_id: `T-${i}`, board: 'ops', assignee: 'a', title: 't', completed_at: new Date(start + i * 1000).toISOString() }),
  );
  const long = `{"note":"${'x'.repeat(mb * MB)}`;
  writeFileSync(path.join(dir, 'trends.jsonl'), `${points.join('\n')}\n${long}`);
  writeFileSync(path.join(dir, 'work', 'completions.jsonl'), `${completions.join('\n')}\n${long}`);
  return dir;
}

async function time(url, route, n) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await fetch(`${url}${route}`, { headers: { 'X-API-Key': KEY } });
    await r.arrayBuffer();
    times.push(performance.now() - t0);
    if (r.status !== 200) throw new Error(`${route}: ${r.status}`);
  }
  return times.sort((a, b) => a - b)[Math.floor(n / 2)];
}

const rows = [];
for (const mb of sizes) {
  const dir = dataDir(mb);
  const server = await startServer([bin, 'serve', '--data-dir', dir, '--port', '0'], env);
  try {
    const n = mb >= 16 ? 3 : 5;
    rows.push({
      'last line MB': mb,
      '/estate/status p50 ms': (await time(server.url, '/estate/status', n)).toFixed(1),
      '/trends p50 ms': (await time(server.url, '/trends?limit=100', n)).toFixed(1),
    });
  } finally {
    await stopServer(server);
  }
}
console.table(rows);
