import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { createKeyWithCli, replicaPostgres, startReplicas } from './helpers/replicas.ts';
import { samplesOf } from './helpers/samples.ts';

// Two hubs (estate serve replicas) on one real PostgreSQL, as issue 24 asks:
// a sample pushed to one is read from the other, per node and in /nodes; the
// same batch pushed to the other is stored once; an ingest key bound to one
// node is refused for another on either replica.

test('two hub replicas on one PostgreSQL: ingested through one, read from the other (?node=, /nodes), resent to the other stored once, a node key refused for another node', { timeout: 120_000 }, async (t) => {
  const pg = await replicaPostgres(t);
  if (!pg) return;
  const [a, b] = await startReplicas(t, pg, 2);
  if (!a || !b) throw new Error('two replicas');
  const dir = await tempDataDir(t);
  const { key: read } = await createKeyWithCli(pg, dir, 'ops');
  const made = await runEstate(['keys', 'create', '--user', 'web-1', '--scope', 'ingest', '--node', 'web-1', '--json', '--store', pg.url, '--data-dir', dir]);
  assert.equal(made.code, 0, made.stderr);
  const web1 = made.json.key as string;

  const batch = samplesOf('web-1', 3, new Date(), { cpu_pct: 12, mem_used_pct: 34, disks: { '/': [90, 10], '/srv': [20, 80] } });
  const first = await a.request('POST', '/ingest', { key: web1, body: { samples: batch } });
  assert.deepEqual([first.status, first.json], [200, { stored: 3, duplicates: 0 }], first.text);

  const trends = await b.request('GET', '/trends?node=web-1', { key: read });
  assert.equal(trends.status, 200, trends.text);
  assert.deepEqual(
    trends.json.items.map((p: { ts: string }) => p.ts),
    batch.map((s) => s.trend.ts).reverse(),
    'the other replica answers the node\'s points, newest first',
  );
  const nodes = await b.request('GET', '/nodes', { key: read });
  assert.equal(nodes.status, 200, nodes.text);
  const node = nodes.json.items.find((n: { name: string }) => n.name === 'web-1');
  assert.ok(node, JSON.stringify(nodes.json));
  assert.deepEqual([node.last_seen, node.stale, node.cpu_pct, node.mem_used_pct, node.disk_used_pct, node.status], [batch.at(-1)?.trend.ts, false, 12, 34, 90, 'healthy']);

  // The answer was lost, say: the collector sends the batch again, this time to the other replica.
  const again = await b.request('POST', '/ingest', { key: web1, body: { samples: batch } });
  assert.deepEqual([again.status, again.json], [200, { stored: 0, duplicates: 3 }], again.text);
  assert.equal((await a.request('GET', '/trends?node=web-1', { key: read })).json.count, 3, 'stored once');

  // web-1's key cannot write web-2's samples, on either replica; nothing of web-2 is stored.
  for (const hub of [a, b]) {
    const refused = await hub.request('POST', '/ingest', { key: web1, body: { samples: samplesOf('web-2', 1, new Date()) } });
    assert.equal(refused.status, 403, refused.text);
  }
  assert.equal((await a.request('GET', '/trends?node=web-2', { key: read })).json.count, 0);
});
