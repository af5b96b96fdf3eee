import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { parseConfig } from '../src/config.ts';
import type { SeriesSample } from '../src/core/store/store.ts';
import { createDataDirStore } from '../src/core/store/data-dir-store.ts';
import { runEstate } from './helpers/cli.ts';
import { ROOT, tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';

// The hub's writes on the data dir: two processes ingesting the same
// samples into one data dir store each once; a prune (an atomic rewrite,
// another inode) under the same lock while samples are ingested and nodes
// read: nothing ingested is lost, no read fails, and the index follows the
// new file (a kept sample is still known, a pruned one is gone).

const config = parseConfig('{}', 'estate.config.json');

function sample(node: string, ts: string, i: number): SeriesSample {
  return {
    trend: { ts, node, cpu_pct: i % 100 },
    disks: [
      { ts, node, mount: '/', fs_type: 'ext4', total_bytes: 100, used_bytes: i % 100, free_bytes: 100 - (i % 100) },
      { ts, node, mount: '/srv', fs_type: 'xfs', total_bytes: 100, used_bytes: 1, free_bytes: 99 },
    ],
    pulse: { ts, node, status: 'healthy', checks: { load: { status: 'healthy', value: 0.1 } } },
  };
}

/** Runs `ingest` in a process of its own over `dataDir`: the result it printed. */
function ingestInProcess(dataDir: string, samplesFile: string): Promise<{ stored: number; duplicates: number }> {
  const script = [
    `import { createDataDirStore } from ${JSON.stringify(path.join(ROOT, 'src/core/store/data-dir-store.ts'))};`,
    "import { readFileSync } from 'node:fs';",
    'const [dir, file] = process.argv.slice(-2);',
    'const store = createDataDirStore(dir);',
    "const result = await store.series.ingest(JSON.parse(readFileSync(file, 'utf8')));",
    'await store.close();',
    'process.stdout.write(JSON.stringify(result));',
  ].join('\n');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', script, dataDir, samplesFile], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`ingest process exited ${code}: ${err}`))));
  });
}

const linesOf = async (dir: string, file: string) => (await readFile(path.join(dir, file), 'utf8')).trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);

test('two processes ingesting the same samples (and overlapping ones) into one data dir store each sample once, whole lines', async (t) => {
  const dir = await tempDataDir(t);
  // Lines of another tool already there: kept, never taken for a sample.
  await writeFile(path.join(dir, 'trends.jsonl'), `${JSON.stringify({ ts: '2026-01-01T00:00:00.000Z', load: 1 })}\n`);
  const base = Date.UTC(2026, 0, 1);
  const samples = Array.from({ length: 400 }, (_, i) => sample(`n${i % 10}`, new Date(base + i * 1000).toISOString(), i));
  const all = path.join(path.dirname(dir), 'all.json');
  const middle = path.join(path.dirname(dir), 'middle.json');
  await writeFile(all, JSON.stringify(samples));
  await writeFile(middle, JSON.stringify(samples.slice(100, 300)));
  const results = await Promise.all([ingestInProcess(dir, all), ingestInProcess(dir, all), ingestInProcess(dir, middle)]);
  assert.equal(results.reduce((n, r) => n + r.stored, 0), 400, JSON.stringify(results));
  assert.equal(results.reduce((n, r) => n + r.duplicates, 0), 600, JSON.stringify(results));
  const trends = await linesOf(dir, 'trends.jsonl');
  assert.equal(trends.length, 401);
  assert.equal(new Set(trends.slice(1).map((r) => `${r.node} ${r.ts}`)).size, 400);
  const disks = await linesOf(dir, 'disk.jsonl');
  assert.equal(new Set(disks.map((r) => `${r.node} ${r.ts} ${r.mount}`)).size, 800);
  assert.equal(disks.length, 800);
  assert.equal((await linesOf(dir, 'health-pulse.jsonl')).length, 400);
  const heartbeat = JSON.parse(await readFile(path.join(dir, 'state', 'heartbeat.json'), 'utf8')) as { nodes: { name: string; last_seen: string }[] };
  assert.deepEqual(
    Object.fromEntries(heartbeat.nodes.map((n) => [n.name, n.last_seen])),
    Object.fromEntries(Array.from({ length: 10 }, (_, k) => [`n${k}`, new Date(base + (390 + k) * 1000).toISOString()])),
  );
});

test('a prune while samples are ingested and nodes read: nothing ingested is lost, every read answers, the index follows the rewritten file', async (t) => {
  const dir = await tempDataDir(t);
  const old = Date.UTC(2000, 0, 1);
  const now = Date.now() - 3_600_000;
  const oldSamples = Array.from({ length: 600 }, (_, i) => sample(`n${i % 6}`, new Date(old + i * 1000).toISOString(), i));
  const keptSamples = Array.from({ length: 600 }, (_, i) => sample(`n${i % 6}`, new Date(now + i * 1000).toISOString(), i));
  const store = createDataDirStore(dir, config);
  t.after(() => store.close());
  assert.deepEqual(await store.series.ingest([...oldSamples, ...keptSamples]), { stored: 1200, duplicates: 0 });
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  // Warm: the server's index knows the whole file.
  assert.equal((await server.get('/trends?node=n2&limit=1000', { 'X-API-Key': key })).json.count, 200);
  await server.ctx.store.series.nodes();

  const fresh = Array.from({ length: 120 }, (_, i) => sample(`n${i % 6}`, new Date(now + (1000 + i) * 1000).toISOString(), i));
  let pruned = false;
  const reads: number[] = [];
  const reading = (async () => {
    // Reads of one node until the prune has ended, and one more after.
    for (let last = false; !last; ) {
      last = pruned;
      const r = await server.get('/trends?node=n2&limit=1000', { 'X-API-Key': key });
      assert.equal(r.status, 200, r.text);
      assert.ok(r.json.items.every((item: { node: string }) => item.node === 'n2'));
      reads.push(r.json.count);
    }
  })();
  const [prune, ingested] = await Promise.all([
    runEstate(['prune', '--older-than', '30d', '--json', '--data-dir', dir]).finally(() => (pruned = true)),
    (async () => {
      const results = [];
      for (let i = 0; i < fresh.length; i += 10) results.push(await store.series.ingest(fresh.slice(i, i + 10)));
      return results;
    })(),
  ]);
  await reading;
  assert.equal(prune.code, 0, prune.stderr);
  assert.equal(prune.json.logs.trends.dropped, 600);
  assert.equal(prune.json.logs.disk.dropped, 1200);
  assert.equal(ingested.reduce((n, r) => n + r.stored, 0), 120);
  assert.ok(reads.length >= 2);

  const trends = await linesOf(dir, 'trends.jsonl');
  assert.deepEqual(
    trends.map((r) => `${r.node} ${r.ts}`),
    [...keptSamples, ...fresh].map((s) => `${s.trend.node} ${s.trend.ts}`),
    'the kept samples, then every sample ingested meanwhile, in order',
  );
  // The server's index reads the new file: n2's records are the kept and fresh ones.
  const n2 = [...keptSamples, ...fresh].filter((s) => s.trend.node === 'n2').map((s) => s.trend.ts).reverse();
  assert.deepEqual((await server.get('/trends?node=n2&limit=1000', { 'X-API-Key': key })).json.items.map((r: { ts: string }) => r.ts), n2);
  assert.deepEqual(
    (await server.get('/disk?node=n2&mount=/srv&limit=1000', { 'X-API-Key': key })).json.items.map((r: { ts: string }) => r.ts),
    n2,
  );
  // The ingesting store's index follows it too: a kept sample is a duplicate, a pruned one is new again.
  assert.deepEqual(await store.series.ingest([keptSamples[7] as SeriesSample, fresh[3] as SeriesSample]), { stored: 0, duplicates: 2 });
  assert.deepEqual(await store.series.ingest([oldSamples[7] as SeriesSample]), { stored: 1, duplicates: 0 });
});

test('series ingest refuses a sample whose parts are not of one node and ts, and stores none of its call', async (t) => {
  const dir = await tempDataDir(t);
  const store = createDataDirStore(dir, config);
  t.after(() => store.close());
  const good = sample('a', '2026-01-01T00:00:00.000Z', 1);
  const mixed = { ...sample('a', '2026-01-01T00:00:01.000Z', 2), pulse: { ...good.pulse, node: 'b' } };
  await assert.rejects(store.series.ingest([good, mixed]), (err: Error & { code?: string }) => err.code === 'validation' && /sample 1/.test(err.message));
  assert.deepEqual((await store.series.newest('trends', 10)).items, []);
  assert.deepEqual(await store.series.nodes(), []);
});

test('a batch sent again leaves the heartbeat file as it is (no rewrite); a newer sample rewrites it, keeping the other entries and their unknown fields', async (t) => {
  const dir = await tempDataDir(t);
  const store = createDataDirStore(dir, config);
  t.after(() => store.close());
  const file = path.join(dir, 'state', 'heartbeat.json');
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify({ site: 'lab', nodes: [{ name: 'other', last_seen: '2026-01-01T00:00:00.000Z', status: 'healthy', owner: 'ops' }] })}\n`);
  const batch = [sample('a', '2026-01-01T00:00:01.000Z', 1), sample('a', '2026-01-01T00:00:02.000Z', 2)];
  await store.series.ingest(batch);
  const first = await stat(file);
  assert.deepEqual(await store.series.ingest(batch), { stored: 0, duplicates: 2 });
  const again = await stat(file);
  assert.deepEqual([again.ino, again.mtimeMs], [first.ino, first.mtimeMs], 'not rewritten');
  await store.series.ingest([sample('a', '2026-01-01T00:00:03.000Z', 3)]);
  assert.deepEqual(JSON.parse(await readFile(file, 'utf8')), {
    site: 'lab',
    nodes: [
      { name: 'other', last_seen: '2026-01-01T00:00:00.000Z', status: 'healthy', owner: 'ops' },
      { name: 'a', last_seen: '2026-01-01T00:00:03.000Z', status: 'healthy' },
    ],
  });
});

test('many ingests at once (one sample of each of 60 nodes, and later ones of half of them) leave every node\'s newest sample in the heartbeat', async (t) => {
  const dir = await tempDataDir(t);
  const store = createDataDirStore(dir, config);
  t.after(() => store.close());
  const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
  const first = Array.from({ length: 60 }, (_, k) => store.series.ingest([sample(`n${k}`, at(1), k)]));
  const later = Array.from({ length: 30 }, (_, k) => store.series.ingest([sample(`n${k * 2}`, at(2), k)]));
  const results = await Promise.all([...first, ...later]);
  assert.equal(results.reduce((n, r) => n + r.stored, 0), 90);
  const heartbeat = JSON.parse(await readFile(path.join(dir, 'state', 'heartbeat.json'), 'utf8')) as { nodes: { name: string; last_seen: string }[] };
  assert.deepEqual(
    Object.fromEntries(heartbeat.nodes.map((n) => [n.name, n.last_seen])),
    Object.fromEntries(Array.from({ length: 60 }, (_, k) => [`n${k}`, at(k % 2 === 0 ? 2 : 1)])),
  );
});
