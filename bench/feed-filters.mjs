// `node bench/feed-filters.mjs`: requests per second of the filtered work
// feed (`/work/feed?board=`, answered from the log index) against the
// unfiltered one (read backwards from the end of the log), on one server over
// a copy of a BENCH_COMPLETIONS (1 000 000) record completions log (made
// under bench/data/ by bench/make-data.mjs when missing). Prints how long the
// first filtered read after start took (the index is still being built
// then), then runs the routes interleaved, A B C D, BENCH_ROUNDS (3) times
// for BENCH_SECONDS (3) each with autocannon (10 connections), and prints the
// median requests per second of each and its ratio to the unfiltered feed of
// the same limit. Needs the built CLI (`npm run build`). It reports; it
// asserts nothing. The machine may be shared: compare medians.
import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { completionsDir } from './make-data.mjs';
import { memoryMb, startServer, stopServer } from './server-process.mjs';

const root = path.resolve(import.meta.dirname, '..');
const count = Number(process.env.BENCH_COMPLETIONS ?? 1_000_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const env = { ...process.env, NO_COLOR: '1' };
delete env.NODE_EXTRA_CA_CERTS;
const log = (s) => process.stderr.write(`${s}\n`);
const PAIRS = [
  ['/work/feed', '/work/feed?board=board-3'],
  ['/work/feed?limit=100', '/work/feed?board=board-3&limit=100'],
];

log(`preparing a ${count}-record completions log…`);
const source = await completionsDir(count);
const dir = await mkdtemp(path.join(os.tmpdir(), 'estate-feed-filters-'));
let server;
try {
  await cp(source, dir, { recursive: true });
  server = await startServer([path.join(root, 'bin', 'estate'), 'serve', '--data-dir', dir, '--port', '0'], env);
  const t0 = performance.now();
  const first = await fetch(`${server.url}/work/feed?board=board-3`);
  await first.arrayBuffer();
  const firstMs = performance.now() - t0;
  // A request that needs the whole index (every filter warm) before the load.
  await (await fetch(`${server.url}/estate/agents`)).arrayBuffer();
  const routes = PAIRS.flat();
  const rps = Object.fromEntries(routes.map((r) => [r, []]));
  let errors = 0;
  for (let round = 0; round < rounds; round++) {
    for (const route of routes) {
      const result = await autocannon({ url: server.url + route, connections: 10, duration: seconds });
      rps[route].push(result.requests.average);
      errors += result.errors + result.non2xx;
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const rss = memoryMb(server.child.pid);
  console.log(`estate serve, ${count} completions, Node ${process.version}; first filtered read after start: ${firstMs.toFixed(0)} ms (status ${first.status})`);
  console.log(`medians of ${rounds} rounds of ${seconds} s, 10 connections${errors ? `; ${errors} errors or non-2xx` : ''}`);
  console.log('| route | req/s (median) | runs | vs unfiltered |');
  console.log('|---|---:|---|---:|');
  for (const [plain, filtered] of PAIRS) {
    for (const route of [plain, filtered]) {
      console.log(`| \`${route}\` | ${median(rps[route]).toFixed(0)} | ${rps[route].map((x) => x.toFixed(0)).join(', ')} | ${(median(rps[route]) / median(rps[plain])).toFixed(2)} |`);
    }
  }
  console.log(`server: VmHWM ${rss.VmHWM} MB (peak), VmRSS ${rss.VmRSS} MB`);
} finally {
  if (server) await stopServer(server);
  await rm(dir, { recursive: true, force: true });
}
