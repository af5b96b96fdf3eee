import assert from 'node:assert/strict';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { createKey } from '../src/core/keys/key-store.ts';
import { startEstate, type RunningEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { samplesOf } from './helpers/samples.ts';
import { readResponse } from './helpers/server.ts';
import { waitUntil } from './helpers/wait-until.ts';

// A hub (`estate serve` without --collect) applies collect.retention to the
// series it ingests (DESIGN.md 7a): at its start when due, logged
// `collect_pruned`; replicas sharing a data dir prune once between them.

type Json = Record<string, any>;

const DAY = 86_400_000;
const LOGS = { trends: 'trends.jsonl', disk: 'disk.jsonl', pulse: 'health-pulse.jsonl' };

const linesOf = async (file: string) => (await readFile(file, 'utf8')).split('\n').filter((l) => l !== '');

async function serve(t: TestContext, dir: string): Promise<{ child: RunningEstate; url: string }> {
  const child = startEstate(t, ['serve', '--port', '0', '--data-dir', dir, '--log-format', 'json', '--quiet']);
  await child.waitForStdout('the hub listens', (out) => / at http:\/\/\S+\n/.test(out));
  return { child, url: / at (http:\/\/\S+)\n/.exec(child.stdout())?.[1] as string };
}

const call = async (url: string, key: string, method: string, route: string, body?: object) =>
  readResponse(await fetch(url + route, { method, headers: { 'X-API-Key': key, ...(body ? { 'Content-Type': 'application/json' } : {}) }, body: body && JSON.stringify(body) }));

/** The JSON log lines of `event` a server wrote on stderr. */
const logged = (stderr: string, event: string): Json[] =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Json)
    .filter((l) => l.event === event);

/** A data dir whose hub ingested, before it had a retention: node `gone`'s samples of 3 days ago, node `kept`'s of then and of an hour ago; plus an undated line in each log. */
async function hubWithOldSamples(t: TestContext): Promise<{ dir: string; read: string; recent: Json[] }> {
  const dir = await tempDataDir(t);
  const write = (await createKey(dir, { userId: 'ops', scopes: ['write'] })).key;
  const read = (await createKey(dir, { userId: 'viewer', scopes: ['read'] })).key;
  const longAgo = new Date(Date.now() - 3 * DAY);
  const recent = samplesOf('kept', 2, new Date(Date.now() - 3_600_000));
  const { child, url } = await serve(t, dir);
  const ingested = await call(url, write, 'POST', '/ingest', { samples: [...samplesOf('gone', 2, longAgo), ...samplesOf('kept', 1, longAgo), ...recent] });
  assert.deepEqual([ingested.status, ingested.json], [200, { stored: 5, duplicates: 0 }], ingested.text);
  const stopped = await child.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.deepEqual(logged(stopped.stderr, 'collect_pruned'), [], 'no retention configured: nothing pruned');
  for (const file of Object.values(LOGS)) await appendFile(path.join(dir, file), 'not a record\n');
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ collect: { retention: '1d' } }));
  return { dir, read, recent };
}

test('a hub without a collector prunes what it ingested past collect.retention at its start, logs it, and reads stay right', async (t) => {
  const { dir, read, recent } = await hubWithOldSamples(t);
  const { child, url } = await serve(t, dir);
  await waitUntil('the hub logs its prune', () => logged(child.stderr(), 'collect_pruned').length > 0);
  assert.deepEqual(
    logged(child.stderr(), 'collect_pruned').map((l) => l.dropped),
    [{ trends: 3, disk: 3, pulse: 3 }],
    'the three old samples, from every series',
  );
  for (const file of Object.values(LOGS)) {
    const lines = await linesOf(path.join(dir, file));
    assert.equal(lines.length, 3, `${file}: the two recent records and the undated line`);
    assert.ok(lines.includes('not a record'), `${file}: an undated line is kept`);
  }
  assert.ok(!Number.isNaN(Date.parse((await readFile(path.join(dir, 'collect', 'pruned-at'), 'utf8')).trim())));

  // Per-node reads and /nodes after the rewrite: the node with no record left has none, the other its recent ones.
  const kept = await call(url, read, 'GET', '/trends?node=kept&limit=10');
  assert.deepEqual(kept.json.items, [...recent].reverse().map((s) => s.trend), kept.text);
  const gone = await call(url, read, 'GET', '/health/pulse?node=gone&limit=10');
  assert.deepEqual(gone.json.items, [], gone.text);
  const disk = await call(url, read, 'GET', '/disk?node=kept&limit=10');
  assert.deepEqual(disk.json.items, [...recent].reverse().flatMap((s) => s.disks), disk.text);
  const nodes = await call(url, read, 'GET', '/nodes');
  const byName = Object.fromEntries(nodes.json.items.map((n: Json) => [n.name, n]));
  assert.deepEqual(Object.keys(byName).sort(), ['gone', 'kept'], 'both still in the heartbeat');
  assert.equal(byName.kept.last_seen, recent[1]?.trend.ts);
  assert.equal(byName.kept.cpu_pct, recent[1]?.trend.cpu_pct);
  assert.equal(byName.gone.cpu_pct, null, 'no trend point of it is left');

  const stopped = await child.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.deepEqual(logged(stopped.stderr, 'collect_prune_failed'), []);
});

test('two hubs on one data dir starting at once prune once between them, and nothing is lost', async (t) => {
  const { dir } = await hubWithOldSamples(t);
  const [a, b] = await Promise.all([serve(t, dir), serve(t, dir)]);
  await waitUntil('one hub prunes', () => logged(a!.child.stderr(), 'collect_pruned').length + logged(b!.child.stderr(), 'collect_pruned').length > 0);
  const [stoppedA, stoppedB] = await Promise.all([a!.child.stop(), b!.child.stop()]);
  assert.equal(stoppedA.code, 0, stoppedA.stderr);
  assert.equal(stoppedB.code, 0, stoppedB.stderr);
  const pruned = [...logged(stoppedA.stderr, 'collect_pruned'), ...logged(stoppedB.stderr, 'collect_pruned')];
  assert.deepEqual(pruned.map((l) => l.dropped), [{ trends: 3, disk: 3, pulse: 3 }], 'one prune, by one of them');
  assert.deepEqual([...logged(stoppedA.stderr, 'collect_prune_failed'), ...logged(stoppedB.stderr, 'collect_prune_failed')], []);
  for (const file of Object.values(LOGS)) assert.equal((await linesOf(path.join(dir, file))).length, 3, file);
});
