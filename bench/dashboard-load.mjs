#!/usr/bin/env node
// How long the dashboard takes to load on a big trends log: the built
// `estate serve` over a data dir whose trends.jsonl holds SIZE of points
// of NODES nodes, 10 s apart, ending now (and the same disk and pulse
// series), opened in headless Chromium (Debian's) with a key; timed from
// navigation until every panel has its data (`data-ready` and each panel's
// state), for each preset window. Reports the median and the worst of RUNS
// loads per window, and the range routes' own time from the server's
// answers; asserts nothing. Bounded in time; not part of `npm test`.
//
//   npm run build && node bench/dashboard-load.mjs [--size 1GB] [--nodes 4] [--runs 5]
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, statSync } from 'node:fs';
import { copyFile, link, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { BENCH_DATA, parseSize } from './make-data.mjs';
import { memoryMb, startEstateServe } from './server-process.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'bin', 'estate');
const { values } = parseArgs({ options: { size: { type: 'string', default: '1GB' }, nodes: { type: 'string', default: '4' }, runs: { type: 'string', default: '5' } } });
const NODES = Math.min(Math.max(Number(values.nodes) || 4, 1), 50);
const RUNS = Math.min(Math.max(Number(values.runs) || 5, 1), 20);
const WINDOWS = ['1h', '24h', '7d', '30d'];
const deadline = setTimeout(() => {
  console.error('bench/dashboard-load: still running after 30 minutes; giving up');
  process.exit(1);
}, 30 * 60_000);
deadline.unref();

/** The trends log of SIZE: every node's point every 10 s, ending at `end` (cached by size and node count, under bench/data/). */
async function trendsLog(label, end) {
  const dir = path.join(BENCH_DATA, `dashboard-${label}-${NODES}n`);
  const file = path.join(dir, 'trends.jsonl');
  const bytes = parseSize(label);
  if (existsSync(file) && statSync(file).size >= bytes) return dir;
  mkdirSync(dir, { recursive: true });
  // About 330 bytes a point: the count that fills SIZE, ending at `end`.
  const count = Math.ceil(bytes / 330);
  const first = end - Math.ceil(count / NODES) * 10_000;
  const out = createWriteStream(file);
  for (let i = 0; i < count; ) {
    const lines = [];
    for (let j = 0; j < 2000 && i < count; j++, i++) {
      const node = `node-${i % NODES}`;
      const ts = new Date(first + Math.floor(i / NODES) * 10_000).toISOString();
      const w = Math.sin(i / 5000);
      lines.push(JSON.stringify({ ts, node, cpu_pct: 30 + 20 * w, load1: 1 + w, load5: 1, load15: 0.9, mem_total_bytes: 8e9, mem_used_bytes: 3e9, mem_used_pct: 37.5 + 5 * w, mem_scope: 'host', swap_used_bytes: 0, uptime_s: i, net_rx_bytes_s: 1e5 * (1 + w), net_tx_bytes_s: 5e4, disk_read_bytes_s: 4e6, disk_write_bytes_s: 2e6 }));
    }
    if (!out.write(`${lines.join('\n')}\n`)) await new Promise((r) => out.once('drain', r));
  }
  await new Promise((r) => out.end(r));
  return dir;
}

const temp = await mkdtemp(path.join(os.tmpdir(), 'estate-bench-dash-'));
const key = randomBytes(24).toString('hex');
let server;
let browser;
try {
  const now = Date.now();
  console.error(`preparing the ${values.size} trends log of ${NODES} nodes…`);
  const source = await trendsLog(values.size, now);
  const dir = path.join(temp, 'data');
  const init = spawnSync(process.execPath, [BIN, 'init', dir], { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`estate init failed (npm run build first?): ${init.stderr}`);
  await rm(path.join(dir, 'trends.jsonl'), { force: true });
  // A hard link (estate follows no symbolic link in a data dir), else a copy.
  await link(path.join(source, 'trends.jsonl'), path.join(dir, 'trends.jsonl')).catch(() => copyFile(path.join(source, 'trends.jsonl'), path.join(dir, 'trends.jsonl')));
  await writeFile(path.join(dir, 'state', 'heartbeat.json'), JSON.stringify({ nodes: Array.from({ length: NODES }, (_, n) => ({ name: `node-${n}`, last_seen: new Date(now).toISOString(), status: 'up' })) }));
  const logSize = statSync(path.join(source, 'trends.jsonl')).size;
  const started = performance.now();
  server = await startEstateServe(BIN, dir, key);
  console.error(`server up in ${((performance.now() - started) / 1000).toFixed(1)} s; waiting for its first rollups pass…`);
  // A server's first start on a log without rollups folds the whole log once (BENCHMARKS.md, issue 25): timed here, then the loads.
  for (;;) {
    const r = await fetch(`${server.url}/trends/range?from=30d&points=720&node=node-0`, { headers: { 'X-API-Key': key } });
    if (r.ok && (await r.json()).tier === '1h') break;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  console.error(`rollups ready ${((performance.now() - started) / 1000).toFixed(1)} s after the start`);
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  const rows = [];
  for (const range of WINDOWS) {
    const loads = [];
    const routes = [];
    for (let run = 0; run < RUNS + 1; run++) {
      const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
      await context.addInitScript({ content: `sessionStorage.setItem('estate.api_key', ${JSON.stringify(key)});` });
      const page = await context.newPage();
      const timings = [];
      page.on('requestfinished', (r) => {
        if (/\/(trends|disk)\/range/.test(r.url())) timings.push(r.timing().responseEnd);
      });
      const t0 = performance.now();
      await page.goto(`${server.url}/dashboard?range=${range}`);
      await page.waitForFunction(() => document.documentElement.dataset.ready === 'true' && document.getElementById('panel-trends')?.dataset.state === 'ok', null, { timeout: 120_000 });
      const ms = performance.now() - t0;
      // The first load of each window is a warm-up (the index, the rollups' first read).
      if (run > 0) {
        loads.push(ms);
        routes.push(Math.max(...timings));
      }
      await context.close();
    }
    loads.sort((a, b) => a - b);
    routes.sort((a, b) => a - b);
    rows.push([range, loads[Math.floor(loads.length / 2)].toFixed(0), loads.at(-1).toFixed(0), routes[Math.floor(routes.length / 2)].toFixed(0)]);
  }
  // Page weight: bytes on the wire (headers and bodies, as Chromium counts them) on a first load with an empty cache, then on a reload.
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  await context.addInitScript({ content: `sessionStorage.setItem('estate.api_key', ${JSON.stringify(key)});` });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  let wire = 0;
  const byType = new Map();
  const types = new Map();
  cdp.on('Network.responseReceived', (e) => types.set(e.requestId, e.type));
  cdp.on('Network.loadingFinished', (e) => {
    wire += e.encodedDataLength;
    const type = types.get(e.requestId) ?? 'Other';
    byType.set(type, (byType.get(type) ?? 0) + e.encodedDataLength);
  });
  const weigh = async (load) => {
    wire = 0;
    byType.clear();
    const t0 = performance.now();
    await load();
    await page.waitForSelector('#panel-trends canvas', { timeout: 120_000 });
    const firstChart = performance.now() - t0;
    await page.waitForFunction(() => document.documentElement.dataset.ready === 'true' && document.getElementById('panel-trends')?.dataset.state === 'ok', null, { timeout: 120_000 });
    await page.waitForTimeout(500);
    return { wire, firstChart, byType: [...byType].map(([t, b]) => `${t} ${(b / 1024).toFixed(1)} KiB`).join(', ') };
  };
  const first = await weigh(() => page.goto(`${server.url}/dashboard`));
  const reload = await weigh(() => page.reload());
  await context.close();
  const memory = memoryMb(server.process.pid);
  console.log(`dashboard load: ${(logSize / 1024 ** 3).toFixed(2)} GiB trends log, ${NODES} nodes every 10 s; ${RUNS} loads per window after one warm-up; Chromium headless, 1400×1000`);
  console.log('| window | load to every panel p50 ms | worst ms | slowest range answer p50 ms |');
  console.log('| --- | ---: | ---: | ---: |');
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
  console.log(`page weight, first load (empty cache): ${(first.wire / 1024).toFixed(1)} KiB on the wire (${first.byType}); first chart drawn after ${first.firstChart.toFixed(0)} ms`);
  console.log(`page weight, reload (warm cache): ${(reload.wire / 1024).toFixed(1)} KiB on the wire (${reload.byType}); first chart drawn after ${reload.firstChart.toFixed(0)} ms`);
  console.log(`server RSS after: ${memory.VmRSS} MB (peak ${memory.VmHWM} MB)`);
} finally {
  await browser?.close();
  server?.process.kill('SIGTERM');
  await server?.exited;
  await rm(temp, { recursive: true, force: true });
}
