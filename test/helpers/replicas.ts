import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { runEstate, startEstate } from './cli.ts';
import { tempDataDir } from './data-dir.ts';
import { startPostgres, type TestPostgres } from './postgres.ts';
import { readResponse, type TestResponse } from './server.ts';

// `estate serve` replicas on one PostgreSQL store, as an operator runs them
// behind a load balancer: real child processes on 127.0.0.1, port 0, each
// with its own data dir (config and node files stay per replica), all with
// the same store. Stopped (SIGTERM) after the test, before the database is dropped.

export interface Replica {
  url: string;
  request: (method: string, path: string, options?: { key?: string; body?: object; timeoutMs?: number }) => Promise<TestResponse>;
}

/** Stops of the replicas started on each database, run before it is dropped. */
const replicasOf = new WeakMap<TestPostgres, (() => Promise<string | undefined>)[]>();

/**
 * A database for replicas (startPostgres; undefined, and the test skipped,
 * without PostgreSQL). After the test, the replicas started on it stop
 * (SIGTERM; one still running 15 s later is killed and fails the test), then
 * the database is dropped: after hooks run in the order they were added, so
 * this one hook does both, in that order.
 */
export async function replicaPostgres(t: TestContext, options: { dedicated?: boolean } = {}): Promise<TestPostgres | undefined> {
  const pg = await startPostgres({ after: () => {} }, options);
  if (!pg) {
    t.skip('PostgreSQL is not installed (apt-get install postgresql)');
    return undefined;
  }
  const stops: (() => Promise<string | undefined>)[] = [];
  replicasOf.set(pg, stops);
  t.after(async () => {
    const failures = (await Promise.all(stops.map((stop) => stop()))).filter((f) => f !== undefined);
    await pg.stop();
    assert.deepEqual(failures, [], 'every replica stops cleanly on SIGTERM');
  });
  return pg;
}

/** `estate migrate` on the test's database, through the real CLI (`dir`: a data dir for the CLI's config). */
export async function migrateWithCli(pg: TestPostgres, dir: string): Promise<void> {
  const migrated = await runEstate(['migrate', '--store', pg.url, '--data-dir', dir]);
  assert.equal(migrated.code, 0, migrated.stderr);
}

/**
 * `count` replicas on `pg` (from replicaPostgres; migrated first). The store
 * is named as an operator may: `--store URL` for the first, `ESTATE_STORE`
 * with the password in PGPASSWORD for the others.
 */
export async function startReplicas(t: TestContext, pg: TestPostgres, count: number): Promise<Replica[]> {
  const stops = replicasOf.get(pg);
  if (!stops) throw new Error('startReplicas needs a database from replicaPostgres');
  await migrateWithCli(pg, await tempDataDir(t));
  const starting = Array.from({ length: count }, async (_, i) => {
    const dir = await tempDataDir(t);
    const common = ['serve', '--host', '127.0.0.1', '--port', '0', '--quiet', '--log-format', 'json', '--data-dir', dir];
    const child = i === 0 ? startEstate(t, [...common, '--store', pg.url]) : startEstate(t, common, { env: { ESTATE_STORE: pg.urlWithoutPassword, PGPASSWORD: pg.password } });
    stops.push(async () => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), 15_000)));
      const stopped = await Promise.race([child.stop(), late]);
      clearTimeout(timer);
      if (!stopped) {
        await child.stop('SIGKILL');
        return `replica ${i} still ran 15 s after SIGTERM: ${child.stderr()}`;
      }
      return stopped.code === 0 ? undefined : `replica ${i} exited ${stopped.code}: ${stopped.stderr}`;
    });
    await child.waitForStdout(`replica ${i} listens`, (out) => / at http:\/\/\S+\n/.test(out), 20_000);
    const url = / at (http:\/\/\S+)\n/.exec(child.stdout())?.[1] as string;
    const request: Replica['request'] = async (method, path, options = {}) => {
      const headers: Record<string, string> = {};
      if (options.key) headers['X-API-Key'] = options.key;
      if (options.body) headers['Content-Type'] = 'application/json';
      const body = options.body ? JSON.stringify(options.body) : undefined;
      return readResponse(await fetch(url + path, { method, headers, body, signal: AbortSignal.timeout(options.timeoutMs ?? 20_000) }));
    };
    return { url, request };
  });
  return Promise.all(starting);
}

/** A new API key of `user`, created with `estate keys create --store` (as an operator on any host would). */
export async function createKeyWithCli(pg: TestPostgres, dir: string, user: string): Promise<{ key: string; keyId: string }> {
  const created = await runEstate(['keys', 'create', '--user', user, '--json', '--store', pg.url, '--data-dir', dir]);
  assert.equal(created.code, 0, created.stderr);
  return { key: created.json.key, keyId: created.json.key_id };
}
