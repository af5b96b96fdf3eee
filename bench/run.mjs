// `npm run bench`: estate against the physical limit. Generates trends logs
// (1 MB, 100 MB, 1 GB) and a 1 M-record completions log, starts `estate
// serve` and a bare node:http server (bench/bare-server.mjs) on loopback, and
// drives both with autocannon, alternating A B A B. Prints one markdown table
// per part. It reports; it asserts nothing. Knobs: BENCH_SIZES=1MB,100MB,1GB,
// BENCH_SECONDS=4 (per run), BENCH_COMPLETIONS=1000000. Writes are measured by
// bench/writes.mjs, which counts every acknowledged write against the log.
import { spawnSync } from 'node:child_process';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { BOARDS, completionsDir, trendsDir } from './make-data.mjs';
import { memoryMb, startServer, stopServer } from './server-process.mjs';

const root = path.resolve(import.meta.dirname, '..');
const bin = path.join(root, 'bin', 'estate');
const sizes = (process.env.BENCH_SIZES ?? '1MB,100MB,1GB').split(',').map((s) => s.trim());
const seconds = Number(process.env.BENCH_SECONDS ?? 4);
const completions = Number(process.env.BENCH_COMPLETIONS ?? 1_000_000);
const KEY = 'bench-key';
const env = { ...process.env, ESTATE_API_KEY: KEY, NO_COLOR: '1' };
delete env.NODE_EXTRA_CA_CERTS;
const log = (s) => process.stderr.write(`${s}\n`);

function load(url, extra = {}) {
  return autocannon({ url, connections: 10, duration: seconds, headers: { 'X-API-Key': KEY }, ...extra });
}

function summary(result) {
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.non2xx };
}

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const fmt = (n, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');

/** Runs A B A B on one route and returns the averaged figures of each side. */
async function compare(estate, bare, route) {
  const runs = { estate: [], bare: [] };
  for (let round = 0; round < 2; round++) {
    runs.estate.push(summary(await load(estate.url + route)));
    runs.bare.push(summary(await load(bare.url + route)));
  }
  const avg = (rs) => ({ rps: mean(rs.map((r) => r.rps)), p50: mean(rs.map((r) => r.p50)), p99: Math.max(...rs.map((r) => r.p99)), errors: rs.reduce((a, r) => a + r.errors, 0) });
  return { estate: avg(runs.estate), bare: avg(runs.bare) };
}

const readRows = [];
const rss = [];
for (const size of sizes) {
  log(`preparing the ${size} trends log…`);
  const dir = await trendsDir(size);
  const estate = await startServer([bin, 'serve', '--data-dir', dir, '--port', '0'], env);
  const bare = await startServer([path.join(root, 'bench', 'bare-server.mjs'), dir], env);
  for (const route of ['/healthz', '/trends?limit=100']) {
    log(`  ${size} ${route}`);
    const { estate: e, bare: b } = await compare(estate, bare, route);
    readRows.push([size, route, fmt(e.rps), fmt(b.rps), fmt(e.rps / b.rps, 2), fmt(e.p50, 1), fmt(b.p50, 1), fmt(e.p99, 1), fmt(b.p99, 1), e.errors]);
  }
  rss.push([`serve, ${size} trends log`, memoryMb(estate.child.pid).VmHWM]);
  await stopServer(estate);
  await stopServer(bare);
}

log(`preparing a ${completions}-record completions log…`);
const feedDir = await completionsDir(completions);
const feedCopy = await mkdtemp(path.join(os.tmpdir(), 'estate-bench-'));
await cp(feedDir, feedCopy, { recursive: true });
const feedServer = await startServer([bin, 'serve', '--data-dir', feedCopy, '--port', '0'], env);
// The first filtered read waits for the index of the whole log: pay that before measuring.
const warm = performance.now();
await fetch(`${feedServer.url}/work/feed?board=${BOARDS[0]}&limit=1`, { headers: { 'X-API-Key': KEY }, signal: AbortSignal.timeout(120_000) });
const indexSeconds = (performance.now() - warm) / 1000;
const feedRows = [];
for (const route of [`/work/feed?board=${BOARDS[7]}&limit=20`, '/work/feed?limit=20', `/publishing/by-site/garden`]) {
  log(`  ${route}`);
  const r = summary(await load(feedServer.url + route));
  feedRows.push([route, fmt(r.rps), fmt(r.p50, 1), fmt(r.p99, 1), r.errors]);
}

rss.push([`serve, ${completions} completions, filtered feeds`, memoryMb(feedServer.child.pid).VmHWM]);
await stopServer(feedServer);
await rm(feedCopy, { recursive: true, force: true });

log('  POST /work/complete (bench/writes.mjs)');
const writes = spawnSync(process.execPath, [path.join(root, 'bench', 'writes.mjs'), '--seconds', String(seconds), '--concurrency', '64'], { env, encoding: 'utf8' });

log('CLI cold start…');
const cold = (args, runs = 15) => {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    spawnSync(process.execPath, args, { env, stdio: 'ignore' });
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)];
};
const trendsSmall = await trendsDir(sizes[0]);
const base = cold(['-e', '0']);
const cliRows = [
  ['node -e 0', fmt(base, 1), '1.00'],
  ['estate --version', fmt(cold([bin, '--version']), 1)],
  ['estate trends --limit 10 --json', fmt(cold([bin, 'trends', '--limit', '10', '--json', '--data-dir', trendsSmall]), 1)],
].map(([name, ms, ratio]) => [name, ms, ratio ?? fmt(Number(ms) / base, 2)]);

const table = (head, rows) => [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
console.log(`estate benchmark, ${new Date().toISOString()}: Node ${process.version}, ${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB; autocannon, 10 connections, ${seconds} s per run, A B A B\n`);
console.log(table(['trends log', 'route', 'estate req/s', 'bare req/s', 'ratio', 'estate p50 ms', 'bare p50 ms', 'estate p99 ms', 'bare p99 ms', 'estate errors'], readRows));
console.log(`\n${table([`route (${completions} completions)`, 'req/s', 'p50 ms', 'p99 ms', 'errors'], feedRows)}`);
console.log(`\nFirst filtered read after start (indexes the whole log once): ${indexSeconds.toFixed(1)} s`);
console.log(`\n\`\`\`\n${writes.stdout.trim() || writes.stderr.trim()}\n\`\`\``);
console.log(`\n${table(['server', 'peak RSS MB'], rss)}`);
console.log(`\n${table(['cold start', 'median ms', '× node -e 0'], cliRows)}`);
