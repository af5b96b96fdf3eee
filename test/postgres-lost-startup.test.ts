import assert from 'node:assert/strict';
import { connect, createServer, type Socket } from 'node:net';
import { test, type TestContext } from 'node:test';
import { parseConfig } from '../src/config.ts';
import { openPostgresStore } from '../src/core/store/postgres-store.ts';
import { migrateStore } from '../src/core/store/postgres/migrate.ts';
import { VERSION } from '../src/version.ts';
import { startEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { createKeyWithCli, replicaPostgres } from './helpers/replicas.ts';
import { readResponse } from './helpers/server.ts';
import { startPostgres, type TestPostgres } from './helpers/postgres.ts';
import { waitUntil } from './helpers/wait-until.ts';

// Connections lost while they start: the PostgreSQL driver (postgres 3.4.9)
// asks each new connection for the server's array types before the query
// that opened it, and a connection lost during that query is tried again
// without end (for as long as it is lost) and its failure escapes as an
// unhandled rejection (porsager/postgres#1192, #1223). A loopback proxy in
// front of the real server cuts such connections, as a restart or a
// terminated backend does at that moment.

/** What PostgreSQL sends a backend it terminates (pg_terminate_backend): a FATAL ErrorResponse, 57P01. */
function terminated(): Buffer {
  const fields = Buffer.from('SFATAL\0VFATAL\0C57P01\0Mterminating connection due to administrator command\0\0');
  const head = Buffer.alloc(5);
  head.write('E');
  head.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([head, fields]);
}

/**
 * A TCP proxy on 127.0.0.1 to `pg`. While `cutting`, every connection after
 * the first is cut when the client asks for the array types (or sends
 * `alsoAt`): closed, or with `terminate` first told it was terminated, as
 * the server tells it.
 */
async function startCuttingProxy(t: TestContext, pg: TestPostgres, how: { terminate?: boolean; alsoAt?: string } = {}) {
  const state = { cutting: true, connections: 0, cut: 0 };
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const n = ++state.connections;
    const upstream = connect(pg.port, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    client.on('data', (chunk: Buffer) => {
      if (state.cutting && n > 1 && (chunk.includes('pg_catalog.pg_type') || (how.alsoAt !== undefined && chunk.includes(how.alsoAt)))) {
        state.cut++;
        upstream.destroy();
        if (how.terminate) client.end(terminated());
        else client.destroy();
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { state, url: pg.url.replace(`127.0.0.1:${pg.port}`, `127.0.0.1:${port}`) };
}

test('a store closes at once while its LISTEN connection is lost at every start', { timeout: 60_000 }, async (t) => {
  const pg = await startPostgres(t);
  if (!pg) return t.skip('PostgreSQL is not installed (apt-get install postgresql)');
  await migrateStore(pg.url, {}, VERSION);
  // The LISTEN connection skips the array types: it is cut at its LISTEN as well.
  const proxy = await startCuttingProxy(t, pg, { alsoAt: 'LISTEN' });
  const store = await openPostgresStore(proxy.url, { dataDir: '/nonexistent', config: parseConfig('{}', 'estate.config.json'), env: {} });
  let closed = false;
  t.after(async () => {
    if (!closed) await store.close();
  });
  await store.completions.write({ task_id: 't1', board: 'ops', assignee: 'ana', title: 'Task t1' }, () => new Date());
  // The third read of a page starts the LISTEN that keeps it, on a connection of its own.
  for (let i = 0; i < 4; i++) assert.equal((await store.completions.newest(10)).records.length, 1);
  await waitUntil('the LISTEN connection was cut', () => proxy.state.cut > 0);
  await store.close();
  closed = true;
});

test('estate serve outlives pool connections lost while the driver asks for the array types, and answers again once they get through', { timeout: 120_000 }, async (t) => {
  const pg = await replicaPostgres(t);
  if (!pg) return;
  const dir = await tempDataDir(t);
  await migrateStore(pg.url, {}, VERSION);
  const { key } = await createKeyWithCli(pg, dir, 'alice');
  const proxy = await startCuttingProxy(t, pg, { terminate: true });
  const serve = startEstate(t, ['serve', '--host', '127.0.0.1', '--port', '0', '--quiet', '--log-format', 'json', '--data-dir', dir, '--store', proxy.url]);
  await serve.waitForStdout('serve listens', (out) => / at http:\/\/\S+\n/.test(out), 20_000);
  const url = / at (http:\/\/\S+)\n/.exec(serve.stdout())?.[1] as string;
  const get = async (path: string) => readResponse(await fetch(url + path, { headers: { 'X-API-Key': key }, signal: AbortSignal.timeout(30_000) }));

  // Requests at once make the pool open more connections: each is cut at the array types.
  const answers = await Promise.all(Array.from({ length: 12 }, () => get('/work/feed')));
  assert.ok(proxy.state.cut > 0, 'some connections were cut while they started');
  for (const r of answers) assert.ok(r.status === 200 || r.status === 503, `${r.status} ${r.text}`);
  assert.equal((await get('/healthz')).status, 200, `estate serve still runs; stderr: ${serve.stderr()}`);

  proxy.state.cutting = false;
  await waitUntil('every request is answered from the store again', async () => {
    const again = await Promise.all(Array.from({ length: 12 }, () => get('/work/feed')));
    return again.every((r) => r.status === 200);
  }, 60_000);
  const stopped = await serve.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.doesNotMatch(stopped.stderr, /unhandled|PostgresError|at .*connection\.js/i);
});
