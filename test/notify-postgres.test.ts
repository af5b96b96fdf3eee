import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { startEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { createKeyWithCli, migrateWithCli, replicaPostgres } from './helpers/replicas.ts';
import { readResponse } from './helpers/server.ts';
import { waitUntil } from './helpers/wait-until.ts';
import { startReceiver } from './helpers/webhook-receiver.ts';

// Two `estate serve` replicas on one PostgreSQL store with the same notify
// target: both see every event, the outbox stores each delivery once, and
// each is attempted by one replica at a time (claims with FOR UPDATE SKIP
// LOCKED): the receiver gets every webhook-id exactly once. Each event is
// stored once, by whichever replica's recorder wrote it first.

const NODES = ['db-1', 'db-2', 'web-1', 'web-2', 'web-3', 'cache-1'];

test('two replicas on one PostgreSQL store deliver each event of the shared series once, whichever ingested it', { timeout: 120_000 }, async (t) => {
  const pg = await replicaPostgres(t);
  if (!pg) return;
  const receiver = await startReceiver(t);
  await migrateWithCli(pg, await tempDataDir(t));
  const config = { alerts: { hold: '0s' }, notify_scan: '1s', notify: [{ name: 'ops', url: receiver.url, secret_env: 'OPS_SECRET', events: ['pulse_degraded'] }] };
  const replicas = await Promise.all(
    [0, 1].map(async (i) => {
      const dir = await tempDataDir(t);
      await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify(config));
      const child = startEstate(t, ['serve', '--port', '0', '--quiet', '--log-format', 'json', '--data-dir', dir, '--store', pg.url], { env: { OPS_SECRET: receiver.secret } });
      await child.waitForStdout(`replica ${i} listens`, (out) => / at http:\/\/\S+\n/.test(out));
      return { child, url: / at (http:\/\/\S+)\n/.exec(child.stdout())?.[1] as string };
    }),
  );
  const { key } = await createKeyWithCli(pg, await tempDataDir(t), 'hub-writer');
  const ts = new Date().toISOString();
  const ingest = async (replica: number, node: string, at: string) => {
    const sample = {
      trend: { ts: at, node, cpu_pct: 10, load1: 0.2, mem_used_pct: 30 },
      disks: [{ ts: at, node, mount: '/', fs_type: 'ext4', total_bytes: 100, used_bytes: 90, free_bytes: 10 }],
      pulse: { ts: at, node, status: 'degraded', checks: { 'disk:/': { status: 'degraded', value: 90 } } },
    };
    const r = await readResponse(await fetch(`${replicas[replica]?.url}/ingest`, { method: 'POST', headers: { 'X-API-Key': key, 'Content-Type': 'application/json' }, body: JSON.stringify({ samples: [sample] }) }));
    assert.ok(r.status < 300, r.text);
  };
  // Half the nodes report through one replica, half through the other.
  for (const [i, node] of NODES.entries()) await ingest(i % 2, node, ts);
  await waitUntil('every node\'s event delivered', () => new Set(receiver.accepted().map((r) => r.payload?.data.subject)).size === NODES.length);

  // A later event, after the replicas have scanned the first ones again and again: delivered too, and nothing before it twice.
  await ingest(1, 'late-1', new Date().toISOString());
  await waitUntil('the later event delivered', () => receiver.accepted().some((r) => r.payload?.data.subject === 'late-1'));
  const expected = NODES.length + 1;
  // The receiver answers before the replica records the attempt: wait for the record, not only the request.
  const listing = async (replica: { url: string }) => readResponse(await fetch(`${replica.url}/notify/deliveries`, { headers: { 'X-API-Key': key } }));
  await waitUntil('every delivery recorded as delivered', async () => {
    const items = (await listing(replicas[0] as { url: string })).json.items as { status: string }[];
    return items.length === expected && items.every((d) => d.status === 'delivered');
  });
  for (const replica of replicas) {
    const listed = await listing(replica);
    assert.equal(listed.status, 200, listed.text);
    assert.equal(listed.json.count, expected, 'one delivery per event, whichever replica enqueued it');
    assert.ok(listed.json.items.every((d: { status: string; attempt_count: number }) => d.status === 'delivered' && d.attempt_count === 1), listed.text);
  }
  const ids = receiver.received.map((r) => r.id);
  assert.equal(ids.length, expected, `every webhook-id once: ${ids.join(' ')}`);
  assert.equal(new Set(ids).size, expected);
  assert.ok(receiver.received.every((r) => r.payload !== undefined), 'every signature verified');
  // Each replica's log (read once it has exited, all of it written) says which deliveries it attempted: together, each once.
  const logs: string[] = [];
  for (const replica of replicas) {
    const stopped = await replica.child.stop();
    assert.equal(stopped.code, 0, stopped.stderr);
    logs.push(stopped.stderr);
  }
  const attempted = logs.flatMap((log) => [...log.matchAll(/"event":"notify_attempt".*?"webhook_id":"(msg_[0-9a-f]+)"/g)].map((m) => m[1]));
  assert.deepEqual(attempted.sort(), [...ids].sort());
  // Both replicas derived every event; each was stored once, by whichever wrote it first (DESIGN.md 3).
  const recorded = logs.flatMap((log) => [...log.matchAll(/"event":"events_recorded","count":(\d+)/g)].map((m) => Number(m[1])));
  assert.equal(recorded.reduce((a, b) => a + b, 0), expected, logs.join('\n'));
});
