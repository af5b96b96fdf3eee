// Reading the newest 100 trend points from a 1 GB log should cost what it
// costs from a 1 MB log. Generates both logs (cached in bench/data/), then
// times GET /trends?limit=100 on a real `estate serve` and the CLI's
// `estate trends --limit 100 --json`, and prints one table. It reports; it
// asserts nothing. Sizes: BENCH_SIZES=1MB,100MB,1GB (default 1MB,1GB).
import { spawn, spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { trendsDir } from './make-data.mjs';

const root = path.resolve(import.meta.dirname, '..');
const bin = path.join(root, 'bin', 'estate');
const sizes = (process.env.BENCH_SIZES ?? '1MB,1GB').split(',').map((label) => ({ label: label.trim() }));
const KEY = 'bench-key';
const env = { ...process.env, ESTATE_API_KEY: KEY, NO_COLOR: '1' };
delete env.NODE_EXTRA_CA_CERTS;

function serve(dataDir) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'serve', '--data-dir', dataDir, '--port', '0'], { env });
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
      const m = /http:\/\/127\.0\.0\.1:\d+/.exec(out);
      if (m) resolve({ child, url: m[0] });
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}`)));
  });
}

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

async function timeHttp(url, n) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await fetch(`${url}/trends?limit=100`, { headers: { 'X-API-Key': KEY } });
    const body = await r.json();
    times.push(performance.now() - t0);
    if (body.items.length !== 100) throw new Error('short read');
  }
  return times;
}

function timeCli(dataDir, n) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, [bin, 'trends', '--limit', '100', '--json', '--data-dir', dataDir], { env, encoding: 'utf8' });
    times.push(performance.now() - t0);
    if (r.status !== 0) throw new Error(r.stderr);
  }
  return times;
}

const rows = [];
for (const { label } of sizes) {
  process.stderr.write(`preparing ${label} log…\n`);
  const dir = await trendsDir(label);
  const file = path.join(dir, 'trends.jsonl');
  const { child, url } = await serve(dir);
  await timeHttp(url, 50);
  const http = await timeHttp(url, 500);
  child.kill('SIGTERM');
  const cli = timeCli(dir, 10);
  rows.push({
    log: label,
    bytes: statSync(file).size,
    'http p50 ms': quantile(http, 0.5).toFixed(2),
    'http p99 ms': quantile(http, 0.99).toFixed(2),
    'cli p50 ms': quantile(cli, 0.5).toFixed(1),
  });
}
console.table(rows);
