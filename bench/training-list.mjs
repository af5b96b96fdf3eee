// Listing one's training runs should cost what one owns, not what everyone
// owns. Writes BENCH_RUNS (default 300) runs of BENCH_PARAMS_KB (default 900)
// KB of params for user `bulk` straight into training/runs/ (as runs written
// before the per-user index existed), starts a real `estate serve`, and times
// GET /training/runs for `empty` (no runs) and `one` (one run): the first call
// (which may build the index) and the steady state. It reports; it asserts
// nothing. BENCH_REPEAT=20 steady calls per caller; BENCH_BIN=path/to/bin/estate
// measures another build.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

const root = path.resolve(import.meta.dirname, '..');
const bin = process.env.BENCH_BIN ?? path.join(root, 'bin', 'estate');
const runs = Number(process.env.BENCH_RUNS ?? 300);
const paramsKb = Number(process.env.BENCH_PARAMS_KB ?? 900);
const repeat = Number(process.env.BENCH_REPEAT ?? 20);
const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NO_COLOR: '1' };
const log = (s) => process.stderr.write(`${s}\n`);

function estate(args) {
  const r = spawnSync(process.execPath, [bin, ...args], { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`estate ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

function serve(dataDir) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'serve', '--data-dir', dataDir, '--port', '0'], { env, stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
      const m = /http:\/\/127\.0\.0\.1:\d+/.exec(out);
      if (m) resolve({ child, url: m[0] });
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}`)));
  });
}

/** A params object of about `kb` KB of JSON: an array of numbers, as a model's settings might hold. */
function params(kb) {
  const weights = [];
  let size = 0;
  while (size < kb * 1024) {
    const w = Math.round(Math.random() * 1e6) / 1e6;
    weights.push(w);
    size += String(w).length + 1;
  }
  return { epochs: 3, weights };
}

async function list(url, key) {
  const t0 = performance.now();
  const r = await fetch(`${url}/training/runs`, { headers: { 'X-API-Key': key } });
  const body = await r.json();
  const ms = performance.now() - t0;
  if (r.status !== 200 || !Array.isArray(body)) throw new Error(`GET /training/runs: ${r.status}`);
  return { ms, count: body.length };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const tmp = await mkdtemp(path.join(os.tmpdir(), 'estate-bench-training-'));
try {
  const dir = path.join(tmp, 'data');
  estate(['init', dir]);
  const keyOf = (user) => JSON.parse(estate(['keys', 'create', '--user', user, '--json', '--data-dir', dir])).key;
  const keys = { empty: keyOf('empty'), one: keyOf('one') };
  log(`writing ${runs} runs of ${paramsKb} KB params for user bulk…`);
  const big = params(paramsKb);
  const at = new Date().toISOString();
  for (let i = 0; i < runs; i++) {
    const run_id = `run_${randomBytes(8).toString('hex')}`;
    const run = { run_id, user_id: 'bulk', status: 'queued', name: `bulk ${i}`, model: null, dataset: null, params: big, created_at: at, updated_at: at };
    await writeFile(path.join(dir, 'training', 'runs', `${run_id}.json`), `${JSON.stringify(run, null, 2)}\n`, { mode: 0o600 });
  }
  estate(['training', 'start', '--user', 'one', '--name', 'mine', '--data-dir', dir]);

  const server = await serve(dir);
  const rows = [];
  try {
    for (const user of ['empty', 'one']) {
      const first = await list(server.url, keys[user]);
      const steady = [];
      for (let i = 0; i < repeat; i++) steady.push((await list(server.url, keys[user])).ms);
      rows.push({ caller: user, 'runs listed': first.count, 'first call ms': first.ms.toFixed(1), 'steady p50 ms': median(steady).toFixed(1) });
    }
  } finally {
    server.child.kill('SIGTERM');
  }
  console.log(`other user's runs: ${runs} × ${paramsKb} KB params; estate: ${bin}`);
  console.table(rows);
} finally {
  await rm(tmp, { recursive: true, force: true });
}
