// Clients that never read their answers: fills a completions log with
// records at every field's longest (JSON-escaped quotes, so each is about
// 8 KB on the wire), starts `estate serve` on loopback, opens CLIENTS
// connections that each ask for `GET /work/feed?limit=1000` PIPELINE times
// and never read a byte, and meanwhile samples the server's resident memory
// and times `/healthz` on fresh connections. Then it drops the clients and
// samples again. It reports; it asserts nothing.
//
//   node bench/non-reading-clients.mjs
//   CLIENTS=300 PIPELINE=1 HOLD_S=20 MAX_CONNECTIONS=1024 ESTATE_BIN=bin/estate node bench/non-reading-clients.mjs
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { memoryMb, startServer, stopServer } from './server-process.mjs';

const root = path.resolve(import.meta.dirname, '..');
const bin = path.resolve(process.env.ESTATE_BIN ?? path.join(root, 'bin', 'estate'));
const clients = Number(process.env.CLIENTS ?? 300);
const pipeline = Number(process.env.PIPELINE ?? 1);
const holdS = Number(process.env.HOLD_S ?? 20);
const records = Number(process.env.RECORDS ?? 2000);
const maxConnections = Number(process.env.MAX_CONNECTIONS ?? 1024);
const log = (s) => process.stderr.write(`${s}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const dir = path.join(await mkdtemp(path.join(os.tmpdir(), 'estate-bench-')), 'data');
spawnSync(process.execPath, [bin, 'init', dir], { stdio: 'ignore' });
await mkdir(path.join(dir, 'work'), { recursive: true });
const line = (i) =>
  JSON.stringify({
    id: `wc_${i.toString(16).padStart(16, '0')}`,
    task_id: `T-${i}-${'"'.repeat(100)}`,
    board: 'ops',
    assignee: '"'.repeat(100),
    title: '"'.repeat(300),
    output_url: `https://example.org/${'u'.repeat(2000)}`,
    summary: '"'.repeat(2000),
    completed_at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
  });
await writeFile(path.join(dir, 'work', 'completions.jsonl'), `${Array.from({ length: records }, (_, i) => line(i)).join('\n')}\n`);
await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ serve: { max_connections: maxConnections } }));

const server = await startServer([bin, 'serve', '--data-dir', dir, '--port', '0'], { ...process.env, NO_COLOR: '1' });
const { port } = new URL(server.url);
const pid = server.child.pid;

/** Milliseconds for GET /healthz on a fresh connection; NaN when refused or cut. */
async function healthzMs() {
  const started = performance.now();
  try {
    const r = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(60_000), headers: { Connection: 'close' } });
    await r.text();
    return r.ok ? performance.now() - started : NaN;
  } catch {
    return NaN;
  }
}

const one = await fetch(`${server.url}/work/feed?limit=1000`);
const oneBytes = (await one.arrayBuffer()).byteLength;
await sleep(500);
const before = memoryMb(pid);
log(`bin ${path.relative(root, bin) || bin}; one /work/feed?limit=1000 answer: ${(oneBytes / 1e6).toFixed(2)} MB; server RSS before: ${before.VmRSS} MB`);

const sockets = [];
let closedByServer = 0;
for (let i = 0; i < clients; i++) {
  const socket = net.connect(Number(port), '127.0.0.1');
  socket.pause();
  socket.on('error', () => {});
  // A paused socket learns of the server's close only on reading: poll it below.
  socket.once('connect', () => socket.write(`GET /work/feed?limit=1000 HTTP/1.1\r\nHost: x\r\n\r\n`.repeat(pipeline)));
  sockets.push(socket);
}

const health = [];
let peakRss = 0;
const until = performance.now() + holdS * 1000;
while (performance.now() < until) {
  const [ms] = await Promise.all([healthzMs(), sleep(500)]);
  health.push(ms);
  peakRss = Math.max(peakRss, memoryMb(pid).VmRSS);
}
const held = memoryMb(pid);
const answered = health.filter(Number.isFinite);
const worst = answered.length ? Math.max(...answered) : NaN;
log(`${clients} non-reading clients × ${pipeline} request(s), held ${holdS} s: RSS peak ${peakRss} MB (VmHWM ${held.VmHWM} MB), now ${held.VmRSS} MB`);
log(`/healthz on a new connection: ${answered.length}/${health.length} answered, slowest ${worst.toFixed(0)} ms`);

// Whether the server has closed each connection: reading drains it (a socket the server cut ends or errors).
await Promise.all(
  sockets.map(
    (s) =>
      new Promise((resolve) => {
        if (s.destroyed) return resolve();
        const done = () => resolve();
        s.on('data', () => {});
        s.once('end', () => {
          closedByServer++;
          done();
        });
        s.once('error', () => {
          closedByServer++;
          done();
        });
        s.resume();
        setTimeout(done, 2000);
      }),
  ),
);
log(`connections the server had closed (seen on reading within 2 s): ${closedByServer}/${clients}`);
for (const s of sockets) s.destroy();
await sleep(2000);
log(`after the clients left: RSS ${memoryMb(pid).VmRSS} MB; /healthz ${(await healthzMs()).toFixed(0)} ms`);
await stopServer(server);
await rm(path.dirname(dir), { recursive: true, force: true });
