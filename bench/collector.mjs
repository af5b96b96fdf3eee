// `node bench/collector.mjs` (and `BENCH_PARTS=collector npm run bench`):
// what the collector costs the node it runs on (issue 24).
//
// 1. Running: `estate collect --interval 10s` on a fresh data dir beside an
//    idle Node.js process (`node -e 'setInterval(()=>{},1e9)'`), both started
//    together and watched the same way for BENCH_COLLECT_SECONDS (default
//    600, ten minutes): CPU as a share of one core, from utime + stime in
//    /proc/PID/stat over the wall time, and RSS (VmRSS in /proc/PID/status,
//    read every second) as its peak and mean. CPU is given over the whole
//    run (start-up included) and from the first sample written on (steady
//    state). The goals: under 0.2 % of one core and under 50 MB RSS.
//    With BENCH_COLLECT_PARTS including hub (the default: running,once,hub) the same, with the
//    collector sending to a hub (`estate collect --url`, an ingest key) that
//    this script starts (`estate serve` on a temp data dir, not measured).
// 2. One shot: `estate collect --once` against `estate trends --limit 10
//    --json` on the same data dir, in turn (A B A B…, after two warm-up runs
//    each, BENCH_ONCE_RUNS pairs, default 20): the median wall time of each
//    and the median of each pair's difference, so a burst of load on the
//    machine weighs on both alike. The goal: --once under 2× trends plus the
//    first sample's CPU window (cpuWindowMs, 250 ms).
//
// Linux only (/proc). Runs the built CLI (bin/estate: `npm run build` first);
// ESTATE_BIN runs another build. It reports; it asserts nothing.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer, stopServer } from './server-process.mjs';

const root = path.resolve(import.meta.dirname, '..');
const bin = path.resolve(process.env.ESTATE_BIN ?? path.join(root, 'bin', 'estate'));
const seconds = Number(process.env.BENCH_COLLECT_SECONDS ?? 600);
const interval = process.env.BENCH_COLLECT_INTERVAL ?? '10s';
const onceRuns = Number(process.env.BENCH_ONCE_RUNS ?? 20);
const parts = new Set((process.env.BENCH_COLLECT_PARTS ?? 'running,once,hub').split(',').map((s) => s.trim()));
/** The first sample's CPU window (src/core/collect/sample-types.ts, cpuWindowMs). */
const CPU_WINDOW_MS = 250;
const env = { ...process.env, NO_COLOR: '1' };
delete env.NODE_EXTRA_CA_CERTS;
const log = (s) => process.stderr.write(`${s}\n`);
const fmt = (n, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');
const table = (head, rows) => [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

const ticksPerSecond = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU seconds (user + system) a process has used, from /proc/PID/stat; NaN once it is gone. */
function cpuSeconds(pid) {
  try {
    // Fields after the command name `(…)`: utime and stime are the 12th and 13th (14 and 15 of the whole line).
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').at(-1).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
  } catch {
    return NaN;
  }
}

/** Resident set size in MiB (VmRSS), from /proc/PID/status; NaN once it is gone. */
function rssMb(pid) {
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return Number(kb) / 1024;
  } catch {
    return NaN;
  }
}

/** A child watched from its start: its CPU at chosen moments, its RSS every second. */
function watch(name, args, cwd) {
  const child = spawn(process.execPath, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const started = performance.now();
  const rss = [];
  let err = '';
  let lines = 0;
  let firstLine;
  const firstSample = new Promise((resolve) => (firstLine = resolve));
  child.stdout.on('data', (c) => {
    lines += String(c).split('\n').length - 1;
    if (lines > 0) firstLine();
  });
  child.stderr.on('data', (c) => (err = (err + c).slice(-2000)));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const timer = setInterval(() => {
    const mb = rssMb(child.pid);
    if (Number.isFinite(mb)) rss.push(mb);
  }, 1000);
  return {
    name,
    child,
    started,
    rss,
    firstSample,
    exited,
    samples: () => lines,
    stderr: () => err,
    async stop() {
      clearInterval(timer);
      child.kill('SIGTERM');
      return exited;
    },
  };
}

const lines = [];
const out = (s = '') => lines.push(s);

/** The collector running beside an idle node, for `seconds`; `extra` are more arguments of estate collect (a hub). */
async function running(title, extra = []) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'estate-bench-collect-'));
  try {
    execFileSync(process.execPath, [bin, 'init', dir], { env, stdio: 'ignore' });
    log(`estate collect --interval ${interval}${extra.length ? ' --url' : ''} beside an idle node process, for ${seconds} s…`);
    const collector = watch('estate collect', [bin, 'collect', '--interval', interval, '--data-dir', dir, '--node', 'bench', ...extra], dir);
    const idle = watch('idle node', ['-e', 'setInterval(()=>{},1e9)'], dir);
    const watched = [collector, idle];
    // Steady state: from the collector's first sample on (the idle process: the same moment).
    await Promise.race([collector.firstSample, collector.exited.then(() => Promise.reject(new Error(`estate collect exited early: ${collector.stderr()}`)))]);
    const steadyAt = performance.now();
    const steadyCpu = watched.map((w) => cpuSeconds(w.child.pid));
    const load = [os.loadavg()[0]];
    const end = collector.started + seconds * 1000;
    while (performance.now() < end) {
      await sleep(Math.min(30_000, Math.max(0, end - performance.now())));
      load.push(os.loadavg()[0]);
      log(`  ${fmt((performance.now() - collector.started) / 1000)} s: collect RSS ${fmt(collector.rss.at(-1), 1)} MiB, ${collector.samples()} samples; idle RSS ${fmt(idle.rss.at(-1), 1)} MiB; load ${fmt(os.loadavg()[0], 2)}`);
    }
    const now = performance.now();
    const rows = watched.map((w, i) => {
      const cpu = cpuSeconds(w.child.pid);
      const wall = (now - w.started) / 1000;
      const steadyWall = (now - steadyAt) / 1000;
      const mean = w.rss.reduce((a, b) => a + b, 0) / w.rss.length;
      return [w.name, fmt(wall), fmt(cpu, 2), fmt((cpu / wall) * 100, 3), fmt(((cpu - steadyCpu[i]) / steadyWall) * 100, 3), fmt(Math.max(...w.rss), 1), fmt(mean, 1), w === collector ? String(w.samples()) : ''];
    });
    const ends = await Promise.all(watched.map((w) => w.stop()));
    out(`${title}: \`estate collect --interval ${interval}${extra.length ? ' --url HUB' : ''}\` for ${seconds} s beside an idle \`node -e 'setInterval(()=>{},1e9)'\` started at the same moment; CPU from utime + stime (/proc/PID/stat, ${ticksPerSecond} ticks a second), RSS from VmRSS (/proc/PID/status) every second. Load average (1 min) during the run: ${fmt(Math.min(...load), 2)}–${fmt(Math.max(...load), 2)}, ${fmt(load.reduce((a, b) => a + b, 0) / load.length, 2)} on average.`);
    out();
    out(table(['process', 'wall s', 'CPU s', 'CPU % of one core (whole run)', 'CPU % of one core (from the first sample)', 'peak RSS MiB', 'mean RSS MiB', 'samples'], rows));
    out();
    out(`The collector printed ${collector.samples()} sample lines and exited ${ends[0].code ?? ends[0].signal} on SIGTERM.${ends[0].code === 0 ? '' : ` stderr: ${collector.stderr().trim()}`}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (parts.has('running')) await running('The collector running');

if (parts.has('hub')) {
  const hubDir = await mkdtemp(path.join(os.tmpdir(), 'estate-bench-hub-'));
  let hub;
  try {
    execFileSync(process.execPath, [bin, 'init', hubDir], { env, stdio: 'ignore' });
    const newKey = (...args) => execFileSync(process.execPath, [bin, 'keys', 'create', '--data-dir', hubDir, ...args], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const key = newKey('--scope', 'ingest', '--node', 'bench', '--user', 'bench');
    const readKey = newKey('--user', 'reader', '--scope', 'read');
    hub = await startServer([bin, 'serve', '--data-dir', hubDir, '--port', '0'], env);
    await running('The collector sending to a hub', ['--url', hub.url, '--api-key', key]);
    const answer = await fetch(`${hub.url}/trends?node=bench&limit=1000`, { headers: { 'X-API-Key': readKey } });
    const stored = answer.ok ? ((await answer.json()).items?.length ?? 0) : `none (${answer.status})`;
    out(`The hub holds ${stored} trend points of the collector's node.`);
  } finally {
    if (hub) await stopServer(hub);
    await rm(hubDir, { recursive: true, force: true });
  }
}

if (parts.has('once')) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'estate-bench-once-'));
  try {
    execFileSync(process.execPath, [bin, 'init', dir], { env, stdio: 'ignore' });
    log(`estate collect --once against estate trends --limit 10 --json, ${onceRuns} pairs…`);
    const wall = (args) => {
      const t0 = performance.now();
      const r = spawnSync(process.execPath, args, { env, stdio: 'ignore' });
      if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}`);
      return performance.now() - t0;
    };
    const once = [bin, 'collect', '--once', '--data-dir', dir, '--node', 'bench'];
    const trends = [bin, 'trends', '--limit', '10', '--json', '--data-dir', dir];
    // Warm-up (and the code cache written, and a previous sample's counters kept: every later --once is a second sample).
    for (let i = 0; i < 2; i++) wall(once), wall(trends);
    const a = [];
    const b = [];
    for (let i = 0; i < onceRuns; i++) {
      a.push(wall(once));
      b.push(wall(trends));
    }
    const bound = b.map((t) => 2 * t + CPU_WINDOW_MS);
    out();
    out(`One shot: \`estate collect --once\` against \`estate trends --limit 10 --json\` on the same data dir (NODE_EXTRA_CA_CERTS unset), in turn after two warm-up runs each, ${onceRuns} pairs; load average ${fmt(os.loadavg()[0], 2)} at the end. Every --once after the first has the previous sample's counters, so it takes no CPU window; the goal allows one (${CPU_WINDOW_MS} ms) all the same.`);
    out();
    out(
      table(
        ['command', 'median wall ms', 'min ms', 'max ms'],
        [
          ['estate collect --once', fmt(median(a), 1), fmt(Math.min(...a), 1), fmt(Math.max(...a), 1)],
          ['estate trends --limit 10 --json', fmt(median(b), 1), fmt(Math.min(...b), 1), fmt(Math.max(...b), 1)],
        ],
      ),
    );
    out();
    out(`Median of the pairs' ratios --once / trends: ${fmt(median(a.map((t, i) => t / b[i])), 2)}×; goal: --once under 2 × trends + ${CPU_WINDOW_MS} ms, median of the pairs' bound ${fmt(median(bound), 1)} ms against --once's ${fmt(median(a), 1)} ms (${a.filter((t, i) => t < bound[i]).length} of ${onceRuns} pairs within it).`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
console.log(`estate collector benchmark, ${new Date().toISOString()}: Node ${process.version}, ${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB\n`);
console.log(lines.join('\n'));
