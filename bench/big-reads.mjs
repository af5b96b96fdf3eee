// `node bench/big-reads.mjs`: does one client's big public reads slow
// another client's small ones? Starts the built `estate serve` (bin/estate,
// or ESTATE_BIN: another build, to compare) on a copy of a completions log
// whose records carry a ~1,000-character summary, so that
// `GET /work/feed?limit=1000` answers 1 MiB, with the rate limit applied to
// loopback clients (`exempt_loopback: false`, otherwise the default limits).
// Two clients, each from an address of its own (127.0.0.2 and 127.0.0.3,
// so each has its own bucket):
//
// - the big reader sends the default burst (120) of `/work/feed?limit=1000`
//   at once, then 10 a second (the default 600 a minute): all within the
//   request rate limit; it reads every answer;
// - the small reader asks `/work/feed?limit=20`, one request at a time, a
//   new one every 20 ms, alone for a while first (the quiet baseline), then
//   while the big reader runs.
//
// The big reader runs in a child process of its own (this script again, with
// BIG_READER set), so that taking in its 1 MiB answers does not delay the
// small reader's event loop. Prints the small reads' p50/p99/max and their
// statuses, quiet and under the big reads, and the big reader's statuses.
// It reports; it asserts nothing.
// Knobs: BENCH_COMPLETIONS=20000, BENCH_SECONDS=15 (of big reads after the
// burst), BENCH_QUIET_SECONDS=5, BENCH_DATA_DIR (where make-data caches logs).
import { spawn } from 'node:child_process';
import { mkdtemp, cp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { completionsDir } from './make-data.mjs';
import { memoryMb, startServer, stopServer } from './server-process.mjs';

const root = path.resolve(import.meta.dirname, '..');
const bin = path.resolve(process.env.ESTATE_BIN ?? path.join(root, 'bin', 'estate'));
const count = Number(process.env.BENCH_COMPLETIONS ?? 20_000);
const seconds = Number(process.env.BENCH_SECONDS ?? 15);
const quietSeconds = Number(process.env.BENCH_QUIET_SECONDS ?? 5);
const BURST = 120;
const PER_SECOND = 10;
// 9 a second: within the small reader's own rate limit (10 a second).
const SMALL_EVERY_MS = 110;
const log = (s) => process.stderr.write(`${s}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** GET `path` from `localAddress` on `agent`: status, bytes and milliseconds. */
function get(url, localAddress, agent) {
  return new Promise((resolve) => {
    const started = performance.now();
    const req = http.get(url, { localAddress, agent }, (res) => {
      let bytes = 0;
      res.on('data', (c) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode, bytes, ms: performance.now() - started, retryAfter: res.headers['retry-after'] }));
      res.on('error', () => resolve({ status: 'reset', bytes, ms: performance.now() - started }));
    });
    req.on('error', (err) => resolve({ status: err.code ?? 'error', bytes: 0, ms: performance.now() - started }));
  });
}

function quantile(sorted, q) {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function tally(results) {
  const counts = {};
  for (const r of results) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return Object.entries(counts)
    .map(([status, n]) => `${status}: ${n}`)
    .join(', ');
}

function summary(results) {
  const ms = results.map((r) => r.ms).sort((a, b) => a - b);
  return { n: ms.length, p50: quantile(ms, 0.5), p99: quantile(ms, 0.99), max: ms.at(-1), over100: ms.filter((m) => m > 100).length, statuses: tally(results) };
}

/** The big reader (in its child process): BURST big reads at once, then PER_SECOND a second for `seconds`; prints their results as JSON. */
async function bigReader(big) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: BURST });
  const results = [];
  const inFlight = [];
  const started = performance.now();
  for (let i = 0; i < BURST; i++) inFlight.push(get(big, '127.0.0.2', agent).then((r) => results.push({ ...r, phase: 'burst' })));
  for (let i = 1; i <= seconds * PER_SECOND; i++) {
    await sleep(Math.max(0, started + (i * 1000) / PER_SECOND - performance.now()));
    inFlight.push(get(big, '127.0.0.2', agent).then((r) => results.push({ ...r, phase: 'steady' })));
  }
  await Promise.all(inFlight);
  agent.destroy();
  process.stdout.write(JSON.stringify({ results, seconds: (performance.now() - started) / 1000 }));
}

if (process.env.BIG_READER) {
  await bigReader(process.env.BIG_READER);
  process.exit(0);
}

log(`preparing a ${count}-record completions log with 1,000-character summaries…`);
const source = await completionsDir(count, { summaryChars: 1000 });
const dir = await mkdtemp(path.join(os.tmpdir(), 'estate-big-reads-'));
let server;
try {
  await cp(source, dir, { recursive: true });
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ serve: { rate_limit: { exempt_loopback: false } } }));
  server = await startServer([bin, 'serve', '--data-dir', dir, '--port', '0'], { ...process.env, NO_COLOR: '1' });
  const big = `${server.url}/work/feed?limit=1000`;
  const small = `${server.url}/work/feed?limit=20`;
  const smallAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });

  const probe = await get(big, '127.0.0.4', undefined);
  log(`one big read: ${probe.status}, ${probe.bytes} bytes, ${probe.ms.toFixed(0)} ms`);

  // The small reader: one request at a time, a new one every SMALL_EVERY_MS, tagged with the phase it began in.
  let phase = 'quiet';
  let stop = false;
  const smallResults = { quiet: [], loaded: [] };
  const smallLoop = (async () => {
    while (!stop) {
      const began = phase;
      const next = sleep(SMALL_EVERY_MS);
      smallResults[began].push(await get(small, '127.0.0.3', smallAgent));
      await next;
    }
  })();
  await sleep(quietSeconds * 1000);

  phase = 'loaded';
  const reader = spawn(process.execPath, [import.meta.filename], { env: { ...process.env, BIG_READER: big }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  reader.stdout.on('data', (c) => (out += c));
  await new Promise((resolve, reject) => reader.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`the big reader exited ${code}`)))));
  const { results: bigResults, seconds: bigSeconds } = JSON.parse(out);
  stop = true;
  await smallLoop;
  smallAgent.destroy();
  const memory = memoryMb(server.child.pid);

  const quiet = summary(smallResults.quiet);
  const loaded = summary(smallResults.loaded);
  const burst = bigResults.filter((r) => r.phase === 'burst');
  const steady = bigResults.filter((r) => r.phase === 'steady');
  const mb = bigResults.filter((r) => r.status === 200).reduce((a, r) => a + r.bytes, 0) / 1024 ** 2;
  const row = (name, s) => `| ${name} | ${s.n} | ${s.p50.toFixed(1)} | ${s.p99.toFixed(1)} | ${s.max.toFixed(1)} | ${s.over100} | ${s.statuses} |`;
  console.log(`estate serve (${path.relative(root, bin) || bin}), ${count} completions of ~1.1 KB, Node ${process.version}, load average ${os.loadavg()[0].toFixed(2)} at the end`);
  console.log(`big reader (127.0.0.2): ${BURST} × /work/feed?limit=1000 at once (${probe.bytes} bytes each), then ${PER_SECOND}/s for ${seconds} s`);
  console.log('');
  console.log('| small reads (127.0.0.3, /work/feed?limit=20) | requests | p50 ms | p99 ms | max ms | over 100 ms | statuses |');
  console.log('|---|---:|---:|---:|---:|---:|---|');
  console.log(row('alone', quiet));
  console.log(row('during the big reads', loaded));
  console.log('');
  console.log(`big reads: burst ${tally(burst)}; then ${tally(steady)}; ${mb.toFixed(0)} MB answered in ${bigSeconds.toFixed(1)} s`);
  console.log(`server: VmHWM ${memory.VmHWM} MB (peak), VmRSS ${memory.VmRSS} MB`);
} finally {
  if (server) await stopServer(server);
  await rm(dir, { recursive: true, force: true });
}
