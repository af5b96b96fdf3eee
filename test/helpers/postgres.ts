import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';

// A real PostgreSQL server for the tests (Debian's `postgresql` package), in a
// temp dir on a free 127.0.0.1 port: one cluster per test file, started at the
// first `startPostgres` and removed when the test process exits; one fresh
// database per call, dropped after its test. Not a mock.
//
// Without the binaries the tests skip (and say so once on stderr), except in CI
// (`CI` or `ESTATE_REQUIRE_POSTGRES` set, as .ci/run does), where a skipped
// PostgreSQL test is a failure.

export interface TestPostgres {
  /** `postgres://postgres:PASSWORD@127.0.0.1:PORT/DB`: the test's own database. */
  url: string;
  /** The same URL without the password (pass it as PGPASSWORD or in a PGPASSFILE). */
  urlWithoutPassword: string;
  password: string;
  database: string;
  port: number;
  /** Stops the server (fast shutdown); the data survives. Only for `{ dedicated: true }`. */
  halt(): Promise<void>;
  /** Starts a halted server again, on the same port. */
  resume(): Promise<void>;
  /** Drops the database (and stops a dedicated cluster); also run after the test. */
  stop(): Promise<void>;
}

interface Cluster {
  root: string;
  dataDir: string;
  socketDir: string;
  port: number;
  password: string;
  running: boolean;
}

const PREFIX = 'estate-pg-';
const OWNER_FILE = 'owner.pid';
let shared: Promise<Cluster> | undefined;
let databases = 0;
let warned = false;
const live = new Set<Cluster>();

/** The directory of PostgreSQL's server binaries (PG_BINDIR, else the newest /usr/lib/postgresql/N/bin), or undefined. */
export function postgresBinDir(): string | undefined {
  const fromEnv = process.env.PG_BINDIR;
  if (fromEnv) return existsSync(path.join(fromEnv, 'initdb')) ? fromEnv : undefined;
  const base = '/usr/lib/postgresql';
  let versions: string[];
  try {
    versions = readdirSync(base).filter((v) => /^\d+$/.test(v) && existsSync(path.join(base, v, 'bin', 'initdb')));
  } catch {
    return undefined;
  }
  versions.sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : path.join(base, versions[0], 'bin');
}

/**
 * A fresh database on this test file's PostgreSQL cluster, dropped after the
 * test; `{ dedicated: true }` gives the test a cluster of its own (to halt and
 * resume). Undefined when PostgreSQL is not installed (the caller skips);
 * throws instead when `CI` or `ESTATE_REQUIRE_POSTGRES` is set.
 */
export async function startPostgres(t: Pick<TestContext, 'after'>, options: { dedicated?: boolean } = {}): Promise<TestPostgres | undefined> {
  const bin = postgresBinDir();
  if (!bin) {
    const how = 'install PostgreSQL (apt-get install postgresql) or set PG_BINDIR to its bin directory';
    if (process.env.CI || process.env.ESTATE_REQUIRE_POSTGRES) throw new Error(`PostgreSQL is not installed, and CI must run the PostgreSQL tests: ${how}`);
    if (!warned) {
      warned = true;
      process.stderr.write(`\n*** PostgreSQL tests SKIPPED: no PostgreSQL server binaries found. To run them, ${how}. ***\n\n`);
    }
    return undefined;
  }
  const cluster = options.dedicated ? await startCluster(bin) : await (shared ??= startCluster(bin));
  const database = `estate_test_${process.pid}_${++databases}`;
  await psql(bin, cluster, `CREATE DATABASE ${database}`);
  const base = `127.0.0.1:${cluster.port}/${database}`;
  let stopped = false;
  const handle: TestPostgres = {
    url: `postgres://postgres:${cluster.password}@${base}`,
    urlWithoutPassword: `postgres://postgres@${base}`,
    password: cluster.password,
    database,
    port: cluster.port,
    halt: async () => {
      if (!options.dedicated) throw new Error('halt() needs startPostgres(t, { dedicated: true })');
      await pgCtl(bin, cluster, ['stop', '-m', 'fast', '-w']);
      cluster.running = false;
    },
    resume: async () => {
      if (!options.dedicated) throw new Error('resume() needs startPostgres(t, { dedicated: true })');
      if (!cluster.running) await startServer(bin, cluster);
    },
    stop: async () => {
      if (stopped) return;
      stopped = true;
      if (options.dedicated) {
        removeCluster(bin, cluster);
        return;
      }
      if (cluster.running) await psql(bin, cluster, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    },
  };
  t.after(() => handle.stop());
  return handle;
}

async function startCluster(bin: string): Promise<Cluster> {
  sweepAbandoned(bin);
  const root = mkdtempSync(path.join(os.tmpdir(), PREFIX));
  writeFileSync(path.join(root, OWNER_FILE), String(process.pid));
  const cluster: Cluster = {
    root,
    dataDir: path.join(root, 'data'),
    socketDir: root,
    port: 0,
    password: randomBytes(12).toString('hex'),
    running: false,
  };
  live.add(cluster);
  if (live.size === 1) cleanUpAtExit(bin);
  const pwfile = path.join(root, 'pwfile');
  writeFileSync(pwfile, `${cluster.password}\n`);
  if (isRoot()) chownSync(root, postgresUid(), postgresGid());
  if (isRoot()) chownSync(pwfile, postgresUid(), postgresGid());
  // Passwords over TCP (as an operator's server), trust on the cluster's own socket (for this harness).
  await run(bin, 'initdb', ['-D', cluster.dataDir, '-U', 'postgres', '--auth-host=scram-sha-256', '--auth-local=trust', `--pwfile=${pwfile}`, '-E', 'UTF8', '--no-sync']);
  rmSync(pwfile);
  for (let attempt = 1; ; attempt++) {
    cluster.port = await freePort();
    try {
      await startServer(bin, cluster);
      return cluster;
    } catch (err) {
      if (attempt >= 3) throw err;
    }
  }
}

async function startServer(bin: string, cluster: Cluster): Promise<void> {
  // fsync off: a test cluster need not survive the machine, only a clean stop.
  const serverOptions = `-p ${cluster.port} -k ${cluster.socketDir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=200`;
  await pgCtl(bin, cluster, ['start', '-w', '-t', '30', '-l', path.join(cluster.root, 'server.log'), '-o', serverOptions]);
  cluster.running = true;
}

function pgCtl(bin: string, cluster: Cluster, args: string[]): Promise<void> {
  return run(bin, 'pg_ctl', ['-D', cluster.dataDir, ...args]);
}

function psql(bin: string, cluster: Cluster, sql: string): Promise<void> {
  return run(bin, 'psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-h', cluster.socketDir, '-p', String(cluster.port), '-U', 'postgres', '-d', 'postgres', '-c', sql]);
}

/** Runs a PostgreSQL binary, as the `postgres` user when we are root (the server refuses root). */
function run(bin: string, program: string, args: string[]): Promise<void> {
  const file = path.join(bin, program);
  const [cmd, argv] = isRoot() ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
  return new Promise((resolve, reject) => {
    execFile(cmd, argv, { cwd: os.tmpdir(), timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${program} ${args.join(' ')} failed: ${stderr || stdout || err.message}`));
      else resolve();
    });
  });
}

function removeCluster(bin: string, cluster: Cluster): void {
  live.delete(cluster);
  if (cluster.running) {
    const file = path.join(bin, 'pg_ctl');
    const args = ['-D', cluster.dataDir, 'stop', '-m', 'immediate', '-w'];
    spawnSync(isRoot() ? 'runuser' : file, isRoot() ? ['-u', 'postgres', '--', file, ...args] : args, { stdio: 'ignore', cwd: os.tmpdir(), timeout: 30_000 });
    cluster.running = false;
  }
  rmSync(cluster.root, { recursive: true, force: true });
}

/** Stops and removes the clusters still running when the process ends, signals included. */
function cleanUpAtExit(bin: string): void {
  const cleanUp = () => {
    for (const cluster of [...live]) removeCluster(bin, cluster);
  };
  process.once('exit', cleanUp);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      cleanUp();
      process.kill(process.pid, signal);
    });
  }
}

/** Clusters left behind by a test process that was killed outright (its owner pid is gone). */
function sweepAbandoned(bin: string): void {
  for (const name of readdirSync(os.tmpdir())) {
    if (!name.startsWith(PREFIX)) continue;
    const root = path.join(os.tmpdir(), name);
    let owner: number;
    try {
      owner = Number(readFileSync(path.join(root, OWNER_FILE), 'utf8'));
    } catch {
      continue;
    }
    if (!Number.isInteger(owner) || owner <= 0 || isAlive(owner)) continue;
    removeCluster(bin, { root, dataDir: path.join(root, 'data'), socketDir: root, port: 0, password: '', running: existsSync(path.join(root, 'data', 'postmaster.pid')) });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const isRoot = () => process.getuid?.() === 0;
let ids: { uid: number; gid: number } | undefined;
function postgresIds(): { uid: number; gid: number } {
  if (!ids) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    ids = { uid, gid };
  }
  return ids;
}
const postgresUid = () => postgresIds().uid;
const postgresGid = () => postgresIds().gid;
