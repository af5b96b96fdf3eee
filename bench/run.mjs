// `npm run bench`: estate against its peers. Generates trends logs (1 MB,
// 100 MB, 1 GB) and a 1 M-record completions log, then:
//
// - reads: starts `estate serve`, the bare node:http server doing the same
//   per-request work (bench/peers/bare-production.mjs) and the same routes on
//   Fastify 5 as a team would ship them (bench/peers/fastify-peer.mjs) on
//   loopback, and drives /healthz and /trends?limit=100 on each, interleaved
//   A B C A B C (three rounds), with wrk (2 threads) when it is installed,
//   else autocannon. Prints the median of the rounds and the ratios
//   estate/bare and estate/Fastify. estate runs with its rate limit applied
//   to loopback clients too (bench/estate-bench.config.json), as the peers do;
// - feeds, writes, memory and CLI cold start (estate alone).
//
// It reports; it asserts nothing. Knobs: BENCH_SIZES=1MB,100MB,1GB,
// BENCH_SECONDS=4 (per run), BENCH_ROUNDS=3, BENCH_CONNECTIONS=50,
// BENCH_TOOL=wrk|autocannon, BENCH_PARTS=reads,feeds,writes,hub,cold,collector,metrics,mcp (what to
// run; hub-postgres adds the hub on PostgreSQL), BENCH_MINIMAL=1 (adds the bare server without production work, the
// physical limit), BENCH_APPEND_MS=N (the servers read a copy of the
// trends log, and another writer appends a point to it every N ms while
// /trends is driven: answers cannot be the same as the last),
// BENCH_COMPLETIONS=1000000. Writes are measured by bench/writes.mjs, which
// counts every acknowledged write against the log. BENCH_PARTS=postgres
// (not run by default: it needs Debian's postgresql package) runs
// bench/postgres-reads.mjs, the aggregates and feeds on PostgreSQL beside
// the data dir. BENCH_PARTS=collector (run by default) runs
// bench/collector.mjs: a running `estate collect --interval 10s` beside an
// idle node for BENCH_COLLECT_SECONDS (default 600: ten minutes), and
// `estate collect --once` against `estate trends --limit 10 --json`.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
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
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const completions = Number(process.env.BENCH_COMPLETIONS ?? 1_000_000);
const parts = new Set((process.env.BENCH_PARTS ?? 'reads,feeds,writes,hub,cold,collector,metrics,mcp').split(',').map((s) => s.trim()));
const appendMs = Number(process.env.BENCH_APPEND_MS ?? 0);
const KEY = 'bench-key';
const env = { ...process.env, ESTATE_API_KEY: KEY, NO_COLOR: '1' };
delete env.NODE_EXTRA_CA_CERTS;
const log = (s) => process.stderr.write(`${s}\n`);

const hasWrk = (() => {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
    return true;
  } catch (err) {
    return err.code !== 'ENOENT'; // wrk --version exits 1 after printing its version
  }
})();
const tool = process.env.BENCH_TOOL ?? (hasWrk ? 'wrk' : 'autocannon');

/** `2.5ms`, `830.00us`, `1.2s` → milliseconds. */
function wrkMs(text) {
  const m = /^([\d.]+)(us|ms|s)$/.exec(text ?? '');
  if (!m) return NaN;
  return Number(m[1]) * { us: 0.001, ms: 1, s: 1000 }[m[2]];
}

/** One run of the load generator: requests per second, p50 and p99 latency (ms), errors (non-2xx/3xx and socket errors). */
async function load(url) {
  if (tool === 'wrk') {
    const out = await new Promise((resolve, reject) => {
      const child = spawn('wrk', ['-t2', `-c${connections}`, `-d${seconds}s`, '--latency', '-H', `X-API-Key: ${KEY}`, url], { stdio: ['ignore', 'pipe', 'inherit'] });
      let text = '';
      child.stdout.on('data', (c) => (text += c));
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited ${code}: ${text}`))));
    });
    const num = (re) => Number(re.exec(out)?.[1] ?? 0);
    const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
    return {
      rps: num(/Requests\/sec:\s+([\d.]+)/),
      p50: wrkMs(/\s50%\s+(\S+)/.exec(out)?.[1]),
      p99: wrkMs(/\s99%\s+(\S+)/.exec(out)?.[1]),
      errors: num(/Non-2xx or 3xx responses: (\d+)/) + (socket ? socket.slice(1).reduce((a, n) => a + Number(n), 0) : 0),
    };
  }
  const r = await autocannon({ url, connections, duration: seconds, headers: { 'X-API-Key': KEY } });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.non2xx };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};
const fmt = (n, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');
const table = (head, rows) => [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');

/** The servers of the reads part, in the order they take turns. */
function readServers(dir) {
  const list = [
    { name: 'estate', args: [bin, 'serve', '--data-dir', dir, '--port', '0', '--config', path.join(root, 'bench', 'estate-bench.config.json')] },
    { name: 'bare', args: [path.join(root, 'bench', 'peers', 'bare-production.mjs'), '--data', dir, '--key', KEY] },
    { name: 'fastify', args: [path.join(root, 'bench', 'peers', 'fastify-peer.mjs'), '--data', dir, '--key', KEY] },
  ];
  if (process.env.BENCH_MINIMAL === '1') list.push({ name: 'minimal', args: [path.join(root, 'bench', 'peers', 'bare-production.mjs'), '--data', dir, '--key', KEY, '--minimal'] });
  return list;
}

const readRows = [];
const roundRows = [];
const rss = [];
let names = [];
if (parts.has('reads')) {
  for (const size of sizes) {
    log(`preparing the ${size} trends log…`);
    const source = await trendsDir(size);
    const dir = appendMs > 0 ? await mkdtemp(path.join(os.tmpdir(), 'estate-bench-trends-')) : source;
    if (appendMs > 0) await cp(source, dir, { recursive: true });
    let seq = 0;
    const appendPoint = () => appendFileSync(path.join(dir, 'trends.jsonl'), `${JSON.stringify({ ts: new Date().toISOString(), node: 'writer', cpu_pct: seq % 100, mem_pct: 50, seq: seq++ })}\n`);
    const servers = [];
    for (const s of readServers(dir)) servers.push({ ...s, ...(await startServer(s.args, env)) });
    names = servers.map((s) => s.name);
    for (const route of ['/healthz', '/trends?limit=100']) {
      // The same work: every server must answer the same bytes.
      const bodies = await Promise.all(servers.map(async (s) => (await fetch(s.url + route, { headers: { 'X-API-Key': KEY } })).text()));
      for (const [i, s] of servers.entries()) if (bodies[i] !== bodies[0]) log(`  WARNING: ${s.name} answers ${route} with other bytes than estate`);
      // A short warm-up of each (JIT, file cache), not counted.
      for (const s of servers) await autocannon({ url: s.url + route, connections: 10, duration: 1, headers: { 'X-API-Key': KEY } });
      const runs = Object.fromEntries(servers.map((s) => [s.name, []]));
      for (let round = 1; round <= rounds; round++) {
        for (const s of servers) {
          const writer = appendMs > 0 && route.startsWith('/trends') ? setInterval(appendPoint, appendMs) : undefined;
          const r = await load(s.url + route);
          clearInterval(writer);
          runs[s.name].push(r);
          log(`  ${size} ${route} round ${round} ${s.name}: ${fmt(r.rps)} req/s`);
        }
        roundRows.push([size, route, round, ...servers.map((s) => fmt(runs[s.name][round - 1].rps)), fmt(runs.estate[round - 1].rps / runs.bare[round - 1].rps, 2), fmt(runs.estate[round - 1].rps / runs.fastify[round - 1].rps, 2)]);
      }
      const med = Object.fromEntries(servers.map((s) => [s.name, { rps: median(runs[s.name].map((r) => r.rps)), p50: median(runs[s.name].map((r) => r.p50)), p99: median(runs[s.name].map((r) => r.p99)), errors: runs[s.name].reduce((a, r) => a + r.errors, 0) }]));
      readRows.push([
        size,
        route,
        ...servers.map((s) => fmt(med[s.name].rps)),
        fmt(med.estate.rps / med.bare.rps, 2),
        fmt(med.estate.rps / med.fastify.rps, 2),
        ...servers.map((s) => `${fmt(med[s.name].p50, 2)} / ${fmt(med[s.name].p99, 2)}`),
        servers.map((s) => med[s.name].errors).join(' / '),
      ]);
    }
    for (const s of servers) {
      const m = memoryMb(s.child.pid);
      rss.push([`${s.name}, ${size} trends log, after the load`, m.VmRSS, m.VmHWM]);
    }
    for (const s of servers) await stopServer(s);
    if (dir !== source) await rm(dir, { recursive: true, force: true });
    if (seq) log(`  ${seq} points appended to the ${size} log while /trends was driven`);
  }
}

let indexSeconds = NaN;
let indexBuiltSeconds = NaN;
const feedRows = [];
if (parts.has('feeds')) {
  log(`preparing a ${completions}-record completions log…`);
  const feedDir = await completionsDir(completions);
  const feedCopy = await mkdtemp(path.join(os.tmpdir(), 'estate-bench-'));
  await cp(feedDir, feedCopy, { recursive: true });
  const feedServer = await startServer([bin, 'serve', '--data-dir', feedCopy, '--port', '0'], env);
  // The first filtered read after start: how long it waits for the index.
  const warm = performance.now();
  await fetch(`${feedServer.url}/work/feed?board=${BOARDS[0]}&limit=1`, { headers: { 'X-API-Key': KEY }, signal: AbortSignal.timeout(120_000) });
  indexSeconds = (performance.now() - warm) / 1000;
  // /estate/agents waits for the whole index: the feeds are then driven with every filter warm.
  await (await fetch(`${feedServer.url}/estate/agents`, { headers: { 'X-API-Key': KEY }, signal: AbortSignal.timeout(300_000) })).arrayBuffer();
  indexBuiltSeconds = (performance.now() - warm) / 1000;
  // Every filter warm: a feed of each board, and a lookup by id (a replayed write).
  for (const board of BOARDS) await (await fetch(`${feedServer.url}/work/feed?board=${board}&limit=20`, { headers: { 'X-API-Key': KEY } })).arrayBuffer();
  const atRest = memoryMb(feedServer.child.pid).VmRSS;
  const feedRoutes = ['/work/feed?limit=20', `/work/feed?board=${BOARDS[7]}&limit=20`, '/publishing/by-site/garden'];
  const feedRuns = Object.fromEntries(feedRoutes.map((r) => [r, []]));
  for (let round = 0; round < rounds; round++) {
    for (const route of feedRoutes) {
      log(`  ${route} (round ${round + 1})`);
      feedRuns[route].push(await load(feedServer.url + route));
    }
  }
  const plain = median(feedRuns[feedRoutes[0]].map((r) => r.rps));
  for (const route of feedRoutes) {
    const runs = feedRuns[route];
    const rps = median(runs.map((r) => r.rps));
    feedRows.push([route, fmt(rps), route.startsWith('/work/feed') ? fmt(rps / plain, 2) : '', fmt(median(runs.map((r) => r.p50)), 1), fmt(median(runs.map((r) => r.p99)), 1), runs.reduce((a, r) => a + r.errors, 0)]);
  }
  const afterLoad = memoryMb(feedServer.child.pid);
  rss.push([`estate, ${completions} completions indexed, every filter warm, at rest`, atRest, '']);
  rss.push([`estate, ${completions} completions indexed, after the feeds' load`, afterLoad.VmRSS, afterLoad.VmHWM]);
  await stopServer(feedServer);
  await rm(feedCopy, { recursive: true, force: true });
}

let writes;
if (parts.has('writes')) {
  log('  POST /work/complete (bench/writes.mjs)');
  writes = spawnSync(process.execPath, [path.join(root, 'bench', 'writes.mjs'), '--seconds', String(seconds), '--concurrency', '64'], { env, encoding: 'utf8' });
}

// The hub (issue 24): 200 nodes pushing samples, on the data dir and, with
// BENCH_PARTS=hub-postgres, on PostgreSQL with three replicas; reads on a
// hub holding 100 nodes × 100,000 points.
const hubRuns = [];
for (const [part, args] of [
  ['hub', [path.join(root, 'bench', 'hub-ingest.mjs'), '--seconds', String(Math.max(seconds, 10))]],
  ['hub-postgres', [path.join(root, 'bench', 'hub-ingest.mjs'), '--seconds', String(Math.max(seconds, 10)), '--postgres', '--replicas', '3']],
  ['hub', [path.join(root, 'bench', 'node-reads.mjs')]],
]) {
  if (!parts.has(part)) continue;
  log(`  ${path.basename(args[0])} ${args.slice(1).join(' ')}`);
  hubRuns.push(spawnSync(process.execPath, args, { env, encoding: 'utf8' }));
}

let postgresReads;
if (parts.has('postgres')) {
  log('PostgreSQL aggregates and feeds beside the data dir (bench/postgres-reads.mjs)…');
  postgresReads = spawnSync(process.execPath, [path.join(root, 'bench', 'postgres-reads.mjs')], { env, encoding: 'utf8' });
}

let metricsScrape;
if (parts.has('metrics')) {
  log('GET /metrics on the big data dirs (bench/metrics-scrape.mjs)…');
  metricsScrape = spawnSync(process.execPath, [path.join(root, 'bench', 'metrics-scrape.mjs')], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
}

let mcpCalls;
if (parts.has('mcp')) {
  log('The MCP face: a read tool over stdio and /mcp beside HTTP, and estate mcp\'s start-up (bench/mcp-calls.mjs)…');
  mcpCalls = spawnSync(process.execPath, [path.join(root, 'bench', 'mcp-calls.mjs')], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
}

let collector;
if (parts.has('collector')) {
  log('The collector: running, and --once (bench/collector.mjs)…');
  collector = spawnSync(process.execPath, [path.join(root, 'bench', 'collector.mjs')], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
}

let cliRows;
if (parts.has('cold')) {
  log('CLI cold start…');
  // Each command in turn with `node -e 0` (A B A B…), after two warm-up
  // runs each: the median wall time of each, and the median of each pair's
  // ratio, so a burst of load on the machine weighs on both sides alike.
  const wall = (args) => {
    const t0 = performance.now();
    spawnSync(process.execPath, args, { env, stdio: 'ignore' });
    return performance.now() - t0;
  };
  const runs = Number(process.env.BENCH_COLD_RUNS ?? 40);
  const base = [];
  const against = (args) => {
    for (let i = 0; i < 2; i++) wall(args), wall(['-e', '0']);
    const times = [];
    const ratios = [];
    for (let i = 0; i < runs; i++) {
      const a = wall(args);
      const b = wall(['-e', '0']);
      times.push(a);
      base.push(b);
      ratios.push(a / b);
    }
    return [fmt(median(times), 1), fmt(median(ratios), 2)];
  };
  const trendsSmall = await trendsDir(sizes[0]);
  const demo = path.join(root, 'fixtures', 'demo-estate');
  const rows = [
    ['estate --version', ...against([bin, '--version'])],
    [`estate trends --limit 10 --json (${sizes[0]} log, no config file)`, ...against([bin, 'trends', '--limit', '10', '--json', '--data-dir', trendsSmall])],
    ['estate trends --limit 10 --json (the demo estate, with its config file)', ...against([bin, 'trends', '--limit', '10', '--json', '--data-dir', demo])],
  ];
  cliRows = [['node -e 0', fmt(median(base), 1), '1.00'], ...rows];
}

const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
const how = tool === 'wrk' ? `wrk, 2 threads, ${connections} connections` : `autocannon, ${connections} connections`;
console.log(`estate benchmark, ${new Date().toISOString()}: Node ${process.version}, ${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, load average ${os.loadavg()[0].toFixed(2)} at the end; ${how}, ${seconds} s per run`);
if (readRows.length) {
  console.log(`\nReads: medians of ${rounds} rounds, interleaved ${names.map((n) => n[0].toUpperCase()).join(' ')} × ${rounds} (${names.join(', ')}); ratios of the medians.${appendMs > 0 ? ` A point appended to the trends log every ${appendMs} ms while /trends is driven.` : ''}\n`);
  console.log(table(['trends log', 'route', ...names.map((n) => `${n} req/s`), 'estate / bare', 'estate / fastify', ...names.map((n) => `${n} p50 / p99 ms`), 'errors'], readRows));
  console.log(`\n<details><summary>every round</summary>\n\n${table(['trends log', 'route', 'round', ...names.map((n) => `${n} req/s`), 'estate / bare', 'estate / fastify'], roundRows)}\n\n</details>`);
}
if (feedRows.length) {
  console.log(`\nFeeds of a ${completions}-record completions log, every filter warm: medians of ${rounds} interleaved rounds.\n`);
  console.log(table([`route (${completions} completions)`, 'req/s', '× unfiltered feed', 'p50 ms', 'p99 ms', 'errors'], feedRows));
  console.log(`\nFirst filtered read after start (answered while the index builds): ${indexSeconds.toFixed(2)} s; the whole index built ${indexBuiltSeconds.toFixed(1)} s after start`);
}
if (writes) console.log(`\n\`\`\`\n${writes.stdout.trim() || writes.stderr.trim()}\n\`\`\``);
for (const run of hubRuns) console.log(`\n${run.stdout.trim() || run.stderr.trim()}`);
if (postgresReads) console.log(`\n${postgresReads.stdout.trim() || postgresReads.stderr.trim()}`);
if (rss.length) console.log(`\n${table(['server', 'RSS MB', 'peak RSS MB (since start)'], rss)}`);
if (collector) console.log(`\n${collector.stdout.trim()}`);
if (metricsScrape) console.log(`\nA Prometheus scrape of GET /metrics:\n${metricsScrape.stdout.trim()}`);
if (mcpCalls) console.log(`\n${mcpCalls.stdout.trim()}`);
if (cliRows) console.log(`\n${table(['cold start (NODE_EXTRA_CA_CERTS unset)', 'median wall ms', '× node -e 0 (median of pairs)'], cliRows)}`);
