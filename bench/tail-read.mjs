// Reading the newest 100 trend points from a 1 GB log should cost what it
// costs from a 1 MB log. Generates both logs (cached in bench/data/), then
// times GET /trends?limit=100 on a real `estate serve` and the CLI's
// `estate trends --limit 100 --json`, and prints one table. It reports; it
// asserts nothing. Sizes: BENCH_SIZES=1MB,100MB,1GB (default 1MB,1GB).
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

const root = path.resolve(import.meta.dirname, '..');
const bin = path.join(root, 'bin', 'estate');
const UNITS = { MB: 1024 ** 2, GB: 1024 ** 3 };
const sizes = (process.env.BENCH_SIZES ?? '1MB,1GB').split(',').map((s) => {
  const m = /^(\d+)(MB|GB)$/.exec(s.trim());
  if (!m) throw new Error(`bad size ${s}`);
  return { label: s.trim(), bytes: Number(m[1]) * UNITS[m[2]] };
});
const KEY = 'bench-key';
const env = { ...process.env, ESTATE_API_KEY: KEY, NO_COLOR: '1' };
delete env.NODE_EXTRA_CA_CERTS;

async function makeLog(dir, bytes) {
  const file = path.join(dir, 'trends.jsonl');
  if (existsSync(file) && statSync(file).size >= bytes) return file;
  mkdirSync(dir, { recursive: true });
  const out = createWriteStream(file);
  const start = Date.parse('2020-01-01T00:00:00Z');
  let written = 0;
  let i = 0;
  while (written < bytes) {
    const lines = [];
    for (let j = 0; j < 1000; j++, i++) {
      lines.push(JSON.stringify({ ts: new Date(start + i * 1000).toISOString(), node: `n${i % 7}`, cpu_pct: (i * 37) % 100, mem_pct: (i * 11) % 100, seq: i }));
    }
    const chunk = `${lines.join('\n')}\n`;
    written += Buffer.byteLength(chunk);
    if (!out.write(chunk)) await new Promise((r) => out.once('drain', r));
  }
  await new Promise((r) => out.end(r));
  return file;
}

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
for (const { label, bytes } of sizes) {
  const dir = path.join(root, 'bench', 'data', `trends-${label}`);
  process.stderr.write(`preparing ${label} log…\n`);
  const file = await makeLog(dir, bytes);
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
