// `node bench/index-memory.mjs`: the memory of `estate serve` holding the
// index of a large completions log. Copies bench/data/completions-N (made by
// bench/make-data.mjs when missing) to a temp dir, starts the built server
// (bin/estate: run `npm run build` first) on it, asks for a filtered feed
// (answered before the index is built), then for /estate/agents (which waits
// for the whole index), warms every filter (a feed of every board, a write
// and a replay, which look keys up), and prints VmHWM (peak RSS) and VmRSS
// from /proc/PID/status (Linux) at rest; then drives the feeds as
// `npm run bench` does (autocannon, 50 connections, each route in turn for
// BENCH_SECONDS, BENCH_ROUNDS rounds) and prints them again after the load,
// with the server's CPU time (user + system, from /proc/PID/stat) per request
// served: a cost that a busy machine does not inflate as it does wall time.
// It reports; it asserts nothing.
// Knobs: BENCH_COMPLETIONS=1000000; BENCH_TRENDS=1GB also links a trends log
// of that size (bench/data/trends-SIZE, made when missing) into the data dir;
// BENCH_SECONDS=4, BENCH_ROUNDS=3, BENCH_CONNECTIONS=50 (0 seconds: no load);
// ESTATE_BIN (another build, to compare); BENCH_DATA_DIR (see make-data.mjs).
import { readFileSync } from 'node:fs';
import { cp, link, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { BOARDS, completionsDir, trendsDir } from './make-data.mjs';
import { memoryMb as status, startServer } from './server-process.mjs';

const root = path.resolve(import.meta.dirname, '..');
const bin = path.resolve(process.env.ESTATE_BIN ?? path.join(root, 'bin', 'estate'));
const count = Number(process.env.BENCH_COMPLETIONS ?? 1_000_000);
const seconds = Number(process.env.BENCH_SECONDS ?? 4);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const trends = process.env.BENCH_TRENDS;
const KEY = 'bench-key';
const env = { ...process.env, ESTATE_API_KEY: KEY, NO_COLOR: '1' };
delete env.NODE_EXTRA_CA_CERTS;
const log = (s) => process.stderr.write(`${s}\n`);

/** CPU seconds (user + system) a process has used, from /proc/PID/stat (Linux). */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime and stime are fields 14 and 15 of the whole line, in clock ticks (100 a second on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

log(`preparing a ${count}-record completions log…`);
const source = await completionsDir(count);
const dir = await mkdtemp(path.join(os.tmpdir(), 'estate-index-memory-'));
let server;
try {
  await cp(source, dir, { recursive: true });
  if (trends) {
    log(`preparing the ${trends} trends log…`);
    // A hard link: estate refuses symbolic links in the data dir.
    await link(path.join(await trendsDir(trends), 'trends.jsonl'), path.join(dir, 'trends.jsonl'));
  }
  server = await startServer([bin, 'serve', '--data-dir', dir, '--port', '0'], env);
  const before = status(server.child.pid);
  const t0 = performance.now();
  const res = await fetch(`${server.url}/work/feed?board=board-3&limit=2`, { headers: { 'X-API-Key': KEY } });
  const body = await res.json();
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`feed answered ${res.status}: ${JSON.stringify(body).slice(0, 300)}`);
  const t1 = performance.now();
  const agents = await fetch(`${server.url}/estate/agents`);
  await agents.arrayBuffer();
  const built = performance.now() - t1;
  const t2 = performance.now();
  const second = await fetch(`${server.url}/work/feed?board=board-3&limit=2`, { headers: { 'X-API-Key': KEY } });
  await second.arrayBuffer();
  const warm = performance.now() - t2;
  for (const board of BOARDS) await (await fetch(`${server.url}/work/feed?board=${board}&limit=20`)).arrayBuffer();
  const post = (body) => fetch(`${server.url}/work/complete`, { method: 'POST', headers: { 'X-API-Key': KEY, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const created = await post({ task_id: 'T-new', board: 'board-1', assignee: 'agent-1', title: 'A new task' });
  const replayed = await post({ task_id: 'T-new', board: 'board-1', assignee: 'agent-1', title: 'A new task' });
  if (created.status !== 201 || replayed.status !== 200) throw new Error(`writes answered ${created.status}, ${replayed.status}`);
  const after = status(server.child.pid);
  // The feeds' load of `npm run bench`: each route in turn, `rounds` times.
  const routes = ['/work/feed?limit=20', `/work/feed?board=${BOARDS[7]}&limit=20`, '/publishing/by-site/garden'];
  const cpuBefore = cpuSeconds(server.child.pid);
  let requests = 0;
  let errors = 0;
  for (let round = 0; round < rounds && seconds > 0; round++) {
    for (const route of routes) {
      const r = await autocannon({ url: server.url + route, connections, duration: seconds, headers: { 'X-API-Key': KEY } });
      requests += r.requests.total;
      errors += r.errors + r.non2xx;
      log(`  ${route} (round ${round + 1}): ${r.requests.average} req/s`);
    }
  }
  const cpu = cpuSeconds(server.child.pid) - cpuBefore;
  const loaded = status(server.child.pid);
  console.log(`estate serve (${path.relative(root, bin) || bin}), ${count} completions${trends ? ` + ${trends} trends log` : ''}, Node ${process.version}`);
  console.log(`  started:            VmRSS ${before.VmRSS} MB`);
  console.log(`  first filtered feed ${ms.toFixed(0)} ms; /estate/agents (waits for the index) ${built.toFixed(0)} ms; then a filtered feed ${warm.toFixed(1)} ms`);
  console.log(`  every filter warm:  VmHWM ${after.VmHWM} MB (peak), VmRSS ${after.VmRSS} MB (at rest)`);
  if (requests > 0) {
    console.log(`  after the feeds' load (${rounds} × ${routes.length} routes × ${seconds} s, ${connections} connections): VmHWM ${loaded.VmHWM} MB (peak), VmRSS ${loaded.VmRSS} MB`);
    console.log(`  ${requests} requests (${errors} errors), server CPU ${cpu.toFixed(1)} s: ${((cpu / requests) * 1e6).toFixed(0)} µs a request; load average ${os.loadavg()[0].toFixed(2)}`);
  }
} finally {
  if (server) {
    const exited = new Promise((r) => server.child.once('exit', r));
    server.child.kill('SIGTERM');
    await exited;
  }
  await rm(dir, { recursive: true, force: true });
}
