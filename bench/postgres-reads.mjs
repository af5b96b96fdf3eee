// `node bench/postgres-reads.mjs`: the aggregates (`/summary`,
// `/estate/agents`) and the feeds (`/work/feed`, `/work/feed?board=`) of a
// server on PostgreSQL beside one on the data dir, over the same
// BENCH_COMPLETIONS (200 000) completions (bench/make-data.mjs) and the demo
// estate's other files and entries.
//
// Starts a temporary PostgreSQL cluster (test/helpers/postgres.ts: Debian's
// postgresql package, run as the postgres user when we are root), migrates
// it to schema version 1, loads the records as estate before the counts
// stored them, then times `estate migrate` counting them (migration 2's
// backfill). Starts the two built servers (bin/estate: `npm run build`
// first), checks that they answer the same (every field but the runtime and
// the time of the answer), and measures them paired, so that the load of a
// shared machine falls on both alike:
//
// - latency: BENCH_REQUESTS (300) sequential requests per route and server,
//   the two servers in turn for each request (which goes first alternates);
// - throughput: autocannon, 10 connections, BENCH_SECONDS (2) per run, the
//   runs interleaved data dir / PostgreSQL (back to back, the order
//   alternating) for BENCH_ROUNDS (9) rounds; medians of the rounds, and
//   the median of the rounds' ratios.
//
// Prints a Markdown table with the ratios PostgreSQL / data dir, `uptime`
// before and after, and both servers' RSS. As wall-clock time on a shared
// machine is noisy, it also prints the CPU time each request cost during
// the throughput runs (/proc): the server's, and for PostgreSQL also that of
// the cluster's processes. It reports; it asserts nothing.
import { spawnSync } from 'node:child_process';
import { createReadStream, readdirSync, readFileSync } from 'node:fs';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { register } from 'tsx/esm/api';
import { completionsDir } from './make-data.mjs';
import { memoryMb, startServer, stopServer } from './server-process.mjs';

const root = path.resolve(import.meta.dirname, '..');
const bin = path.join(root, 'bin', 'estate');
const count = Number(process.env.BENCH_COMPLETIONS ?? 200_000);
const requests = Number(process.env.BENCH_REQUESTS ?? 300);
const rounds = Number(process.env.BENCH_ROUNDS ?? 9);
const seconds = Number(process.env.BENCH_SECONDS ?? 2);
const KEY = 'bench-key';
const env = { ...process.env, ESTATE_API_KEY: KEY, NO_COLOR: '1' };
delete env.NODE_EXTRA_CA_CERTS;
const log = (s) => process.stderr.write(`${s}\n`);
const uptime = () => spawnSync('uptime', { encoding: 'utf8' }).stdout.trim();
const AGGREGATES = ['/summary', '/estate/agents'];
/** Clock ticks per second of /proc's CPU times (getconf CLK_TCK). */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
const FEEDS = ['/work/feed', '/work/feed?board=board-3'];
/** The routes measured (BENCH_ROUTES=/work/feed,… for some of them). */
const ROUTES = process.env.BENCH_ROUTES ? process.env.BENCH_ROUTES.split(',') : [...AGGREGATES, ...FEEDS];

register();
const { startPostgres } = await import('../test/helpers/postgres.ts');
const { migrate } = await import('../src/core/store/postgres/migrate.ts');
const { tallyQuery } = await import('../src/core/store/postgres/postgres-tally.ts');
const { COMPLETIONS } = await import('../src/core/work.ts');
const { default: postgres } = await import('postgres');

const cleanups = [];
const servers = [];
try {
  log(`preparing a ${count}-record completions log…`);
  const source = path.join(await completionsDir(count), 'work', 'completions.jsonl');
  const config = JSON.stringify({ node_name: 'hub', identity: { name: 'Bench estate' } });
  const makeDir = async (withLogs) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'estate-pg-reads-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await cp(path.join(root, 'fixtures', 'demo-estate'), dir, { recursive: true });
    await writeFile(path.join(dir, 'estate.config.json'), config);
    if (withLogs) await cp(source, path.join(dir, 'work', 'completions.jsonl'));
    else {
      await rm(path.join(dir, 'work', 'completions.jsonl'));
      await rm(path.join(dir, 'publishing', 'entries.jsonl'));
    }
    return dir;
  };
  const dataDir = await makeDir(true);
  const pgDir = await makeDir(false);

  const pg = await startPostgres({ after: (f) => cleanups.push(f) }, { dedicated: true });
  if (!pg) throw new Error("PostgreSQL is needed: Debian's postgresql package (apt-get install postgresql) or PG_BINDIR");
  const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
  cleanups.push(() => sql.end());
  await migrate(sql, 'bench', 'bench', 1);
  log('loading the records into schema version 1…');
  const load = async (file, table, columns) => {
    const insert = `INSERT INTO ${table} (${columns.map(([c]) => c).join(', ')}, record) SELECT ${columns.map(([, f]) => `r->>'${f}'`).join(', ')}, r FROM jsonb_array_elements($1::text::jsonb) AS r`;
    let lines = [];
    const flush = async () => {
      if (lines.length) await sql.unsafe(insert, [`[${lines.join(',')}]`]);
      lines = [];
    };
    for await (const line of createInterface({ input: createReadStream(file) })) {
      if (line.trim()) lines.push(line);
      if (lines.length >= 5000) await flush();
    }
    await flush();
  };
  await load(source, 'completions', [['id', 'id'], ['board', 'board'], ['task_id', 'task_id']]);
  const entries = path.join(root, 'fixtures', 'demo-estate', 'publishing', 'entries.jsonl');
  await load(entries, 'entries', [['id', 'entry_id'], ['target_site', 'target_site'], ['slug', 'slug'], ['content_type', 'content_type']]);
  await sql`VACUUM ANALYZE`;
  const t0 = performance.now();
  const migrated = spawnSync(process.execPath, [bin, 'migrate', '--store', pg.url, '--data-dir', pgDir], { encoding: 'utf8', env });
  const migrateMs = performance.now() - t0;
  if (migrated.status !== 0) throw new Error(`estate migrate failed: ${migrated.stderr}`);
  await sql`VACUUM ANALYZE`;
  // What one tally costs the database (/estate/agents' cutoffs), in pages read rather than time.
  const day = 86_400_000;
  const cutoffs = [new Date(Date.now() - day), new Date(Date.now() - 7 * day)].map((d) => d.toISOString());
  await sql.unsafe(tallyQuery('completions', COMPLETIONS), ['completions', cutoffs]);
  const [plan] = (await sql.unsafe(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${tallyQuery('completions', COMPLETIONS)}`, ['completions', cutoffs]))[0]['QUERY PLAN'];
  const pages = plan.Plan['Shared Hit Blocks'] + plan.Plan['Shared Read Blocks'];

  const before = uptime();
  const dd = await startServer([bin, 'serve', '--data-dir', dataDir, '--port', '0'], env);
  servers.push(dd);
  const onPg = await startServer([bin, 'serve', '--data-dir', pgDir, '--port', '0'], { ...env, ESTATE_STORE: pg.url });
  servers.push(onPg);
  const pair = [
    { name: 'data dir', server: dd },
    { name: 'PostgreSQL', server: onPg },
  ];

  const get = async (server, route) => {
    const t = performance.now();
    const res = await fetch(server.url + route, { headers: { 'X-API-Key': KEY } });
    const body = await res.text();
    const ms = performance.now() - t;
    if (res.status !== 200) throw new Error(`${route} answered ${res.status}: ${body.slice(0, 300)}`);
    return { ms, body };
  };
  // The same answers, but for what differs by nature (the runtime, the time of the answer).
  const comparable = (route, body) => {
    const json = JSON.parse(body);
    delete json.runtime;
    delete json.generated_at;
    return JSON.stringify(json);
  };
  const differing = [];
  for (const route of [...AGGREGATES, ...FEEDS, '/work/feed?limit=1000', '/publishing/latest']) {
    const [a, b] = await Promise.all(pair.map((p) => get(p.server, route)));
    if (comparable(route, a.body) !== comparable(route, b.body)) differing.push(route);
  }
  for (let i = 0; i < 20; i++) for (const route of ROUTES) for (const p of pair) await get(p.server, route);

  log('latency…');
  const times = new Map();
  const timesOf = (name, route) => times.get(`${name} ${route}`) ?? times.set(`${name} ${route}`, []).get(`${name} ${route}`);
  for (let i = 0; i < requests; i++) {
    for (const route of ROUTES) {
      for (const p of i % 2 ? [...pair].reverse() : pair) timesOf(p.name, route).push((await get(p.server, route)).ms);
    }
  }
  log('throughput…');
  const rps = new Map();
  const rpsOf = (name, route) => rps.get(`${name} ${route}`) ?? rps.set(`${name} ${route}`, []).get(`${name} ${route}`);
  // Per round, PostgreSQL's req/s over the data dir's of the same round (run back to back: the load of the moment hits both).
  const ratios = new Map();
  const ratiosOf = (route) => ratios.get(route) ?? ratios.set(route, []).get(route);
  const cpu = new Map();
  const cpuOf = (name, route) => cpu.get(`${name} ${route}`) ?? cpu.set(`${name} ${route}`, { ms: 0, cluster: 0, requests: 0 }).get(`${name} ${route}`);
  const postmaster = postmasterPid();
  const cpuMs = (p) => ({ server: cpuTimeMs(p.server.child.pid), cluster: p.server === onPg ? clusterCpuMs(postmaster) : 0 });
  let errors = 0;
  for (let round = 0; round < rounds; round++) {
    for (const route of ROUTES) {
      for (const p of round % 2 ? [...pair].reverse() : pair) {
        const cpuBefore = cpuMs(p);
        const result = await autocannon({ url: p.server.url + route, connections: 10, duration: seconds, headers: { 'X-API-Key': KEY } });
        const used = cpuOf(p.name, route);
        const cpuAfter = cpuMs(p);
        used.ms += cpuAfter.server - cpuBefore.server + Math.max(0, cpuAfter.cluster - cpuBefore.cluster);
        // A cluster process that ended during the run takes its CPU time with it: never below 0.
        used.cluster += Math.max(0, cpuAfter.cluster - cpuBefore.cluster);
        used.requests += result.requests.total;
        rpsOf(p.name, route).push(result.requests.average);
        errors += result.errors + result.non2xx;
      }
      const [d, q] = pair.map((p) => rpsOf(p.name, route).at(-1));
      ratiosOf(route).push(q / d);
    }
  }
  const after = uptime();
  const pct = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
  const median = (xs) => pct(xs, 0.5);

  console.log(`${count} completions, Node ${process.version}, PostgreSQL ${(await sql`SHOW server_version`)[0].server_version}; ${cpuLine()}`);
  console.log(`estate migrate counting the ${count} stored rows (migration 2): ${(migrateMs / 1000).toFixed(1)} s`);
  console.log(`one tally statement (/estate/agents' cutoffs): ${pages} pages of 8 KB read, ${plan.Plan['Temp Written Blocks'] ?? 0} temporary pages written, ${plan['Execution Time'].toFixed(2)} ms in the server`);
  console.log(`answers the same on both: ${differing.length ? `NO, differing: ${differing.join(', ')}` : 'yes'}`);
  console.log(`latency: ${requests} sequential requests per route and server, paired; throughput: autocannon 10 connections, ${rounds} rounds of ${seconds} s, interleaved (medians; "req/s PG / dir" is the median of the rounds' ratios)${errors ? `; ${errors} errors or non-2xx` : ''}`);
  console.log('');
  console.log('| route | data dir p50 (ms) | PostgreSQL p50 (ms) | p50 PG / dir | data dir p99 | PostgreSQL p99 | data dir req/s | PostgreSQL req/s | req/s PG / dir |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const route of ROUTES) {
    const [d, q] = pair.map((p) => timesOf(p.name, route));
    const [rd, rq] = pair.map((p) => median(rpsOf(p.name, route)));
    console.log(
      `| \`${route}\` | ${pct(d, 0.5).toFixed(2)} | ${pct(q, 0.5).toFixed(2)} | ${(pct(q, 0.5) / pct(d, 0.5)).toFixed(2)} | ${pct(d, 0.99).toFixed(2)} | ${pct(q, 0.99).toFixed(2)} | ${rd.toFixed(0)} | ${rq.toFixed(0)} | ${median(ratiosOf(route)).toFixed(2)} |`,
    );
  }
  console.log('');
  console.log('CPU time per request during the throughput runs (ms; PostgreSQL: the server and the cluster\'s processes):');
  console.log('');
  console.log('| route | data dir | PostgreSQL | of which the cluster | PG / dir |');
  console.log('|---|---:|---:|---:|---:|');
  for (const route of ROUTES) {
    const [d, q] = pair.map((p) => cpuOf(p.name, route));
    const per = (u, ms) => ms / Math.max(1, u.requests);
    console.log(`| \`${route}\` | ${per(d, d.ms).toFixed(3)} | ${per(q, q.ms).toFixed(3)} | ${per(q, q.cluster).toFixed(3)} | ${(per(q, q.ms) / per(d, d.ms)).toFixed(2)} |`);
  }
  console.log('');
  console.log(`req/s of each round: ${[...rps].map(([k, v]) => `${k}: ${v.map((x) => x.toFixed(0)).join(' ')}`).join('; ')}`);
  console.log(`PG / dir of each round: ${[...ratios].map(([k, v]) => `${k}: ${v.map((x) => x.toFixed(2)).join(' ')}`).join('; ')}`);
  console.log(`RSS: data dir VmHWM ${memoryMb(dd.child.pid).VmHWM} MB, PostgreSQL store VmHWM ${memoryMb(onPg.child.pid).VmHWM} MB`);
  console.log(`uptime before: ${before}`);
  console.log(`uptime after:  ${after}`);
} finally {
  for (const s of servers) await stopServer(s).catch(() => {});
  for (const f of cleanups.reverse()) await f();
}

/** User + system CPU time of a process so far, in ms (/proc/PID/stat; 0 when it is gone). */
function cpuTimeMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/** The CPU time of the benchmark's PostgreSQL cluster: its postmaster's children (backends, writers) and itself, live ones. */
function clusterCpuMs(postmaster) {
  let total = cpuTimeMs(postmaster);
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const fields = readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1].split(' ');
      if (Number(fields[1]) === postmaster) total += ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
    } catch {
      // Ended meanwhile.
    }
  }
  return total;
}

/** The postmaster of the cluster test/helpers/postgres.ts started for this process (its temp dir names this pid as owner). */
function postmasterPid() {
  for (const name of readdirSync(os.tmpdir())) {
    if (!name.startsWith('estate-pg-')) continue;
    try {
      if (readFileSync(path.join(os.tmpdir(), name, 'owner.pid'), 'utf8').trim() !== String(process.pid)) continue;
      return Number(readFileSync(path.join(os.tmpdir(), name, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
    } catch {
      // Not ours, or gone.
    }
  }
  throw new Error('cannot find the PostgreSQL cluster of this benchmark');
}

function cpuLine() {
  return `${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'})`;
}
