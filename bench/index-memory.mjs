// `node bench/index-memory.mjs`: the memory of `estate serve` holding the
// index of a large completions log. Copies bench/data/completions-N (made by
// bench/make-data.mjs when missing) to a temp dir, starts the built server
// (bin/estate: run `npm run build` first) on it, asks for a filtered feed
// (answered before the index is built), then for /estate/agents (which waits
// for the whole index), warms every filter (a feed of every board, a write
// and a replay, which look keys up), and prints VmHWM (peak RSS) and VmRSS
// from /proc/PID/status (Linux). It reports; it asserts nothing.
// Knobs: BENCH_COMPLETIONS=1000000; BENCH_TRENDS=1GB also links a trends log
// of that size (bench/data/trends-SIZE, made when missing) into the data dir.
import { cp, link, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { BOARDS, completionsDir, trendsDir } from './make-data.mjs';
import { memoryMb as status, startServer } from './server-process.mjs';

const root = path.resolve(import.meta.dirname, '..');
const bin = path.join(root, 'bin', 'estate');
const count = Number(process.env.BENCH_COMPLETIONS ?? 1_000_000);
const trends = process.env.BENCH_TRENDS;
const KEY = 'bench-key';
const env = { ...process.env, ESTATE_API_KEY: KEY, NO_COLOR: '1' };
delete env.NODE_EXTRA_CA_CERTS;
const log = (s) => process.stderr.write(`${s}\n`);

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
  console.log(`estate serve, ${count} completions${trends ? ` + ${trends} trends log` : ''}, Node ${process.version}`);
  console.log(`  started:            VmRSS ${before.VmRSS} MB`);
  console.log(`  first filtered feed ${ms.toFixed(0)} ms; /estate/agents (waits for the index) ${built.toFixed(0)} ms; then a filtered feed ${warm.toFixed(1)} ms`);
  console.log(`  every filter warm:  VmHWM ${after.VmHWM} MB (peak), VmRSS ${after.VmRSS} MB`);
} finally {
  if (server) {
    const exited = new Promise((r) => server.child.once('exit', r));
    server.child.kill('SIGTERM');
    await exited;
  }
  await rm(dir, { recursive: true, force: true });
}
