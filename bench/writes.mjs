#!/usr/bin/env node
// Benchmark of durable writes: acknowledged POST /work/complete per second,
// with fsync on (as always), against the built binary.
//
//   node bench/writes.mjs [--seconds 5] [--concurrency 64]
//   node bench/writes.mjs --postgres [--replicas 3]     (a temporary PostgreSQL cluster)
//   node bench/writes.mjs --store postgres://… [--replicas 3]   (PGPASSWORD for its password)
//
// Starts `bin/estate serve --port 0` on 127.0.0.1 over a fresh temporary data
// dir (with a PostgreSQL store: REPLICAS servers on one database, `estate
// migrate`d first, requests spread over them in turn), keeps CONCURRENCY
// requests in flight for SECONDS, each a new completion, then stops the
// servers and checks what was stored: exactly one valid record per
// acknowledged (201) write, no id twice. Reports; asserts nothing about
// speed. Needs `npm run build` first. Bounded in time: a hard deadline kills
// the servers and fails the run. Not part of `npm test`. `--postgres` starts
// a cluster with test/helpers/postgres.ts (Debian's postgresql package).

import { spawnSync } from 'node:child_process';
import { register } from 'tsx/esm/api';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startEstateServe } from './server-process.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'bin', 'estate');
const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '64' },
    store: { type: 'string' },
    postgres: { type: 'boolean', default: false },
    replicas: { type: 'string', default: '3' },
  },
});
const SECONDS = Math.min(Math.max(Number(values.seconds) || 5, 1), 120);
const CONCURRENCY = Math.min(Math.max(Number(values.concurrency) || 64, 1), 1024);
const HARD_DEADLINE_MS = (SECONDS + 60) * 1000;

const temp = await mkdtemp(path.join(os.tmpdir(), 'estate-bench-writes-'));
const dataDir = path.join(temp, 'data');
const apiKey = randomBytes(24).toString('hex');
const servers = [];
const cleanups = [];
const deadline = setTimeout(() => {
  console.error(`bench/writes: still running after ${HARD_DEADLINE_MS / 1000}s; giving up`);
  for (const s of servers) s.process.kill('SIGKILL');
  process.exit(1);
}, HARD_DEADLINE_MS);
deadline.unref();

/** `estate serve` on a free loopback port; resolves once it prints its URL. */
async function startServe(env) {
  const server = await startEstateServe(BIN, dataDir, apiKey, env);
  servers.push(server);
  return server;
}

try {
  const init = spawnSync(process.execPath, [BIN, 'init', dataDir], { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`estate init failed (is the CLI built? npm run build): ${init.stderr}`);

  let storeUrl = values.store;
  if (values.postgres && !storeUrl) {
    register();
    const { startPostgres } = await import('../test/helpers/postgres.ts');
    const pg = await startPostgres({ after: (f) => cleanups.push(f) }, { dedicated: true });
    if (!pg) throw new Error('--postgres needs Debian\'s postgresql package (apt-get install postgresql)');
    storeUrl = pg.url;
  }
  const storeEnv = storeUrl ? { ESTATE_STORE: storeUrl, ...(process.env.PGPASSWORD ? { PGPASSWORD: process.env.PGPASSWORD } : {}) } : {};
  if (storeUrl) {
    const migrated = spawnSync(process.execPath, [BIN, 'migrate', '--data-dir', dataDir], { encoding: 'utf8', env: { ...process.env, ...storeEnv } });
    if (migrated.status !== 0) throw new Error(`estate migrate failed: ${migrated.stderr}`);
  }
  const replicas = storeUrl ? Math.min(Math.max(Number(values.replicas) || 3, 1), 8) : 1;
  await Promise.all(Array.from({ length: replicas }, () => startServe(storeEnv)));
  let turn = 0;

  const run = randomBytes(4).toString('hex');
  let next = 0;
  let created = 0;
  const failures = new Map();
  const latencies = [];
  const started = performance.now();
  const stopAt = started + SECONDS * 1000;

  async function worker() {
    while (performance.now() < stopAt) {
      const i = next++;
      const body = JSON.stringify({ task_id: `B-${run}-${i}`, board: 'bench', assignee: 'bench', title: `Benchmark write ${i}`, summary: 'x'.repeat(120) });
      const t0 = performance.now();
      try {
        const res = await fetch(`${servers[turn++ % servers.length].url}/work/complete`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-API-Key': apiKey },
          body,
          signal: AbortSignal.timeout(30_000),
        });
        await res.arrayBuffer();
        if (res.status === 201) {
          created++;
          latencies.push(performance.now() - t0);
        } else failures.set(res.status, (failures.get(res.status) ?? 0) + 1);
      } catch (err) {
        const key = err?.name ?? 'error';
        failures.set(key, (failures.get(key) ?? 0) + 1);
      }
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const elapsed = (performance.now() - started) / 1000;

  for (const s of servers) s.process.kill('SIGTERM');
  const codes = (await Promise.all(servers.map((s) => s.exited))).map((e) => e.code);
  const code = codes.join(', ');
  servers.length = 0;

  let lines;
  let complete = true;
  if (storeUrl) {
    // What the database holds: one row per acknowledged write.
    const { default: postgres } = await import('postgres');
    const sql = postgres(storeUrl, { max: 1, onnotice: () => {} });
    lines = (await sql`SELECT record FROM completions WHERE task_id LIKE ${`B-${run}-%`}`).map((r) => JSON.stringify(r.record));
    await sql.end();
  } else {
    const text = await readFile(path.join(dataDir, 'work', 'completions.jsonl'), 'utf8').catch(() => '');
    lines = text.split('\n');
    complete = text === '' || text.endsWith('\n');
    if (complete) lines.pop();
  }
  let invalid = 0;
  const ids = new Set();
  for (const line of lines) {
    try {
      ids.add(JSON.parse(line).id);
    } catch {
      invalid++;
    }
  }
  latencies.sort((a, b) => a - b);
  const pct = (p) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))].toFixed(1) : '-');
  const ok = lines.length === created && invalid === 0 && ids.size === created && complete;

  const where = storeUrl ? `PostgreSQL store, ${replicas} replica${replicas === 1 ? '' : 's'} (committed before 201)` : 'data dir store (fsync before 201)';
  console.log(`estate write benchmark: POST /work/complete, ${CONCURRENCY} in flight for ${SECONDS}s, ${where}`);
  console.log(`  acknowledged (201): ${created} in ${elapsed.toFixed(2)}s = ${(created / elapsed).toFixed(0)} writes/s`);
  console.log(`  latency ms: p50 ${pct(0.5)}  p90 ${pct(0.9)}  p99 ${pct(0.99)}  max ${pct(1)}`);
  if (failures.size) console.log(`  not acknowledged: ${[...failures].map(([k, v]) => `${k}×${v}`).join(', ')}`);
  console.log(`  stored afterwards: ${lines.length} records, ${invalid} invalid, ${ids.size} distinct ids${storeUrl ? '' : `, ends with a newline: ${complete}`}`);
  console.log(`  server exit code${replicas > 1 ? 's' : ''} after SIGTERM: ${code}`);
  console.log(ok ? '  OK: the store holds exactly the acknowledged writes' : '  MISMATCH: the store does not hold exactly the acknowledged writes');
  process.exitCode = ok ? 0 : 1;
} finally {
  for (const s of servers) s.process.kill('SIGKILL');
  for (const cleanup of cleanups.reverse()) await cleanup();
  await rm(temp, { recursive: true, force: true });
}
