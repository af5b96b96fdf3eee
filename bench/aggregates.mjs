// `node bench/aggregates.mjs`: the latency of the dashboard's aggregate
// routes on a big estate. Copies the demo estate (small state files, pulse,
// disk, builds, published entries) to a temp dir, puts a BENCH_COMPLETIONS
// (1 000 000) record completions log and a BENCH_TRENDS (1GB) trends log in
// it (bench/make-data.mjs makes them under bench/data/ when missing), leaves
// the external sources (forge, providers) out of the config, starts the
// built server (bin/estate: run `npm run build` first), warms every route,
// then sends BENCH_REQUESTS (300) sequential requests to each, one route
// after another in rounds, and prints p50/p99 per route (client side, over
// loopback) and the server's RSS. BENCH_LOAD=1 also runs the rounds while
// autocannon keeps 10 connections busy on `/trends?limit=100`. It reports;
// it asserts nothing. The machine may be shared: compare medians of runs.
import { cp, link, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { completionsDir, trendsDir } from './make-data.mjs';
import { memoryMb, startServer, stopServer } from './server-process.mjs';

const root = path.resolve(import.meta.dirname, '..');
const bin = path.join(root, 'bin', 'estate');
const count = Number(process.env.BENCH_COMPLETIONS ?? 1_000_000);
const trends = process.env.BENCH_TRENDS ?? '1GB';
const requests = Number(process.env.BENCH_REQUESTS ?? 300);
const underLoad = process.env.BENCH_LOAD === '1';
const KEY = 'bench-key';
const env = { ...process.env, ESTATE_API_KEY: KEY, NO_COLOR: '1' };
delete env.NODE_EXTRA_CA_CERTS;
const log = (s) => process.stderr.write(`${s}\n`);
const ROUTES = ['/summary', '/estate/agents', '/api/garden', '/estate/status', '/estate/logs', '/work/feed?board=board-3'];

log(`preparing a ${count}-record completions log and the ${trends} trends log…`);
const completions = await completionsDir(count);
const trendsSource = path.join(await trendsDir(trends), 'trends.jsonl');
const dir = await mkdtemp(path.join(os.tmpdir(), 'estate-aggregates-'));
let server;
try {
  await cp(path.join(root, 'fixtures', 'demo-estate'), dir, { recursive: true });
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ node_name: 'hub', identity: { name: 'Bench estate' } }));
  await cp(path.join(completions, 'work', 'completions.jsonl'), path.join(dir, 'work', 'completions.jsonl'));
  await rm(path.join(dir, 'trends.jsonl'));
  // A hard link (estate refuses symbolic links in the data dir); a copy when another file system holds the temp dir.
  await link(trendsSource, path.join(dir, 'trends.jsonl')).catch(() => cp(trendsSource, path.join(dir, 'trends.jsonl')));
  server = await startServer([bin, 'serve', '--data-dir', dir, '--port', '0'], env);
  const get = async (route) => {
    const t0 = performance.now();
    const res = await fetch(server.url + route, { headers: { 'X-API-Key': KEY } });
    const body = await res.arrayBuffer();
    const ms = performance.now() - t0;
    if (res.status !== 200) throw new Error(`${route} answered ${res.status}: ${Buffer.from(body).toString().slice(0, 300)}`);
    return ms;
  };
  const first = {};
  for (const route of ROUTES) first[route] = await get(route);
  const summary = await (await fetch(`${server.url}/summary`, { headers: { 'X-API-Key': KEY } })).json();
  const failed = Object.entries(summary).filter(([, v]) => v && typeof v === 'object' && v.error);
  if (failed.length) throw new Error(`/summary sections failed: ${JSON.stringify(Object.fromEntries(failed))}`);
  for (let i = 0; i < 20; i++) for (const route of ROUTES) await get(route);
  const load = underLoad
    ? autocannon({ url: `${server.url}/trends?limit=100`, connections: 10, duration: 3600, headers: { 'X-API-Key': KEY } })
    : undefined;
  const times = Object.fromEntries(ROUTES.map((r) => [r, []]));
  for (let i = 0; i < requests; i++) for (const route of ROUTES) times[route].push(await get(route));
  load?.stop();
  const rss = memoryMb(server.child.pid);
  const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
  console.log(`estate serve, ${count} completions + ${trends} trends log, ${requests} sequential requests per route${underLoad ? ', under load' : ''}, Node ${process.version}`);
  console.log('| route | first (ms) | p50 (ms) | p99 (ms) |');
  console.log('|---|---:|---:|---:|');
  for (const route of ROUTES) console.log(`| \`${route}\` | ${first[route].toFixed(1)} | ${pct(times[route], 50).toFixed(2)} | ${pct(times[route], 99).toFixed(2)} |`);
  console.log(`server: VmHWM ${rss.VmHWM} MB (peak), VmRSS ${rss.VmRSS} MB`);
} finally {
  if (server) await stopServer(server);
  await rm(dir, { recursive: true, force: true });
}
