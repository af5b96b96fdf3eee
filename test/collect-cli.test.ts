import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate, startEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { df, tempTree, writeTree } from './helpers/fake-host.ts';
import { newKey } from './helpers/server.ts';
import { waitUntil } from './helpers/wait-until.ts';

// `estate collect` (DESIGN.md 7a): the real CLI on a temp data dir, sampling
// this machine (or a fake host root with --host-prefix, for exact rates).

const LINUX = process.platform === 'linux';
const RATES = ['net_rx_bytes_s', 'net_tx_bytes_s', 'disk_read_bytes_s', 'disk_write_bytes_s'];

async function lines(file: string): Promise<string[]> {
  try {
    return (await readFile(file, 'utf8')).split('\n').filter((l) => l !== '');
  } catch {
    return [];
  }
}

const records = async (file: string): Promise<any[]> => (await lines(file)).map((l) => JSON.parse(l));

test('collect --once appends one trend point, one snapshot per file system (the data dir\'s as df says), one pulse entry, and merges the heartbeat', { skip: !LINUX }, async (t) => {
  const dir = await tempDataDir(t);
  const other = { name: 'db-1', last_seen: '2026-01-01T00:00:00Z', status: 'healthy', rack: 'b7' };
  const mine = { name: 'web-1', last_seen: '2025-01-01T00:00:00Z', status: 'unhealthy', role: 'front' };
  await writeFile(path.join(dir, 'state', 'heartbeat.json'), JSON.stringify({ nodes: [other, mine], hub: 'h1' }));

  const r = await runEstate(['collect', '--once', '--node', 'web-1', '--data-dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  assert.match(r.stdout, /^\S+ web-1: (healthy|degraded|unhealthy); 1 trend point, \d+ disk snapshots?, 1 pulse entry, heartbeat merged/);

  const trends = await records(path.join(dir, 'trends.jsonl'));
  assert.equal(trends.length, 1);
  const [point] = trends;
  assert.equal(point.node, 'web-1');
  assert.equal(typeof point.cpu_pct, 'number');
  assert.equal(typeof point.mem_total_bytes, 'number');
  for (const field of RATES) assert.equal(field in point, false, `${field} on a first sample`);

  const disks = await records(path.join(dir, 'disk.jsonl'));
  assert.ok(disks.length >= 1);
  assert.equal(new Set(disks.map((d) => d.mount)).size, disks.length, 'one snapshot per file system');
  for (const d of disks) assert.equal(d.ts, point.ts);
  const own = df(dir);
  const snapshot = disks.find((d) => d.mount === own.mount);
  assert.ok(snapshot, `the data dir's file system ${own.mount} among ${disks.map((d) => d.mount).join(', ')}`);
  assert.equal(snapshot.total_bytes, own.total_bytes);

  const pulses = await records(path.join(dir, 'health-pulse.jsonl'));
  assert.equal(pulses.length, 1);
  assert.equal(pulses[0].ts, point.ts);
  for (const d of disks) assert.ok(pulses[0].checks[`disk:${d.mount}`], `disk:${d.mount}`);
  assert.ok(pulses[0].checks.memory && pulses[0].checks.load);

  const heartbeat = JSON.parse(await readFile(path.join(dir, 'state', 'heartbeat.json'), 'utf8'));
  assert.deepEqual(heartbeat, { nodes: [other, { ...mine, last_seen: point.ts, status: pulses[0].status }], hub: 'h1' });

  // A second run has rates since the first (each present unless this machine cannot show it, then named).
  const second = await runEstate(['collect', '--once', '--node', 'web-1', '--data-dir', dir, '--json']);
  assert.equal(second.code, 0, second.stderr);
  for (const field of RATES) assert.ok(typeof second.json.trend[field] === 'number' || second.json.missing.includes(field), field);
  // --json prints exactly what was written.
  const after = await records(path.join(dir, 'trends.jsonl'));
  assert.equal(after.length, 2);
  assert.deepEqual(second.json.trend, after[1]);
  assert.deepEqual(second.json.disks, (await records(path.join(dir, 'disk.jsonl'))).slice(disks.length));
  assert.deepEqual(second.json.pulse, (await records(path.join(dir, 'health-pulse.jsonl')))[1]);
  assert.deepEqual(second.json.heartbeat, { name: 'web-1', last_seen: after[1].ts, status: second.json.pulse.status });

  // estate trends shows the collector's point.
  const shown = await runEstate(['trends', '--json', '--data-dir', dir]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.ok(shown.json.items.some((i: any) => i.ts === after[1].ts && i.node === 'web-1'), shown.stdout);
});

test('a heartbeat that is not valid JSON is left byte for byte, named on stderr and in the pulse; the series are still written', { skip: !LINUX }, async (t) => {
  const dir = await tempDataDir(t);
  const file = path.join(dir, 'state', 'heartbeat.json');
  const corrupt = '{"nodes": [{"name": "db-1", "last_seen": "2026-';
  await writeFile(file, corrupt);
  const r = await runEstate(['collect', '--once', '--node', 'web-1', '--data-dir', dir, '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(await readFile(file, 'utf8'), corrupt);
  assert.match(r.stderr, /^estate collect: state\/heartbeat\.json is not valid JSON .*left as it is\n$/);
  const [pulse] = await records(path.join(dir, 'health-pulse.jsonl'));
  assert.equal(pulse.checks.heartbeat.status, 'degraded');
  assert.match(pulse.checks.heartbeat.message, /heartbeat\.json is not valid JSON/);
  assert.notEqual(pulse.status, 'healthy');
  assert.equal(r.json.heartbeat, undefined);
  assert.match(r.json.heartbeat_problem, /not valid JSON/);
  assert.equal((await lines(path.join(dir, 'trends.jsonl'))).length, 1);
});

test('the heartbeat keeps the shape it has: a nodes map, a bare list; JSON of another shape is left alone too', { skip: !LINUX }, async (t) => {
  const dir = await tempDataDir(t);
  const file = path.join(dir, 'state', 'heartbeat.json');
  const collect = async () => {
    const r = await runEstate(['collect', '--once', '--json', '--node', 'web-1', '--data-dir', dir]);
    assert.equal(r.code, 0, r.stderr);
    return r.json;
  };
  await writeFile(file, JSON.stringify({ nodes: { 'db-1': { last_seen: 'x' }, 'web-1': { last_seen: 'old', owner: 'ops' } } }));
  let out = await collect();
  assert.deepEqual(JSON.parse(await readFile(file, 'utf8')), { nodes: { 'db-1': { last_seen: 'x' }, 'web-1': { last_seen: out.trend.ts, owner: 'ops', status: out.pulse.status } } });
  await writeFile(file, JSON.stringify([{ node: 'web-1', zone: 'a' }, { name: 'db-1' }]));
  out = await collect();
  assert.deepEqual(JSON.parse(await readFile(file, 'utf8')), [{ node: 'web-1', zone: 'a', name: 'web-1', last_seen: out.trend.ts, status: out.pulse.status }, { name: 'db-1' }]);
  for (const other of ['42', '{"nodes": "many"}', 'null']) {
    await writeFile(file, other);
    out = await collect();
    assert.equal(await readFile(file, 'utf8'), other);
    assert.match(out.heartbeat_problem, /is not a heartbeat/);
    assert.equal(out.pulse.checks.heartbeat.status, 'degraded');
  }
});

function netDev(rx: number, tx: number): string {
  return 'Inter-|   Receive |  Transmit\n face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n' +
    `  eth0: ${rx} 10 0 0 0 0 0 0 ${tx} 20 0 0 0 0 0 0\n`;
}

function diskstats(read: number, written: number): string {
  return `   8       0 sda 100 3 ${read} 40 200 5 ${written} 60 0 70 80 0 0 0 0 0 0\n`;
}

test('counters are kept in the data dir between --once runs: the second run of a host has its rates; a corrupt counters file means a first sample', { skip: !LINUX }, async (t) => {
  const dir = await tempDataDir(t);
  const root = await tempTree(t);
  const kernel = (rx: number, tx: number, read: number, written: number) => ({
    files: {
      'proc/stat': 'cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 100 0 50 800 50 0 0 0 0 0\n',
      'proc/loadavg': '0.10 0.20 0.30 1/100 999\n',
      'proc/meminfo': 'MemTotal: 8000000 kB\nMemAvailable: 6000000 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n',
      'proc/uptime': '100.00 100.00\n',
      'proc/1/net/dev': netDev(rx, tx),
      'proc/diskstats': diskstats(read, written),
      'proc/1/mountinfo': '20 1 8:1 / / rw - ext4 /dev/sda1 rw\n',
    },
    deviceLinks: ['sys/class/net/eth0/device', 'sys/block/sda/device'],
  });
  await writeTree(root, kernel(1_000, 2_000, 10, 20));
  const run = (extra: string[] = []) => runEstate(['collect', '--once', '--json', '--node', 'fake', '--data-dir', dir, ...extra], { env: { ESTATE_HOST_PREFIX: root } });
  const first = await run();
  assert.equal(first.code, 0, first.stderr);
  for (const field of RATES) assert.equal(field in first.json.trend, false, field);
  await writeTree(root, kernel(1_000_000, 2_000, 10 + 2048, 20));
  const second = await run();
  assert.equal(second.code, 0, second.stderr);
  const seconds = (Date.parse(second.json.trend.ts) - Date.parse(first.json.trend.ts)) / 1000;
  assert.ok(second.json.trend.net_rx_bytes_s > 0);
  assert.equal(second.json.trend.net_tx_bytes_s, 0);
  assert.ok(Math.abs(second.json.trend.net_rx_bytes_s - 999_000 / seconds) <= 0.1 + 999_000 / seconds * 0.01, JSON.stringify(second.json.trend));
  assert.ok(Math.abs(second.json.trend.disk_read_bytes_s - (2048 * 512) / seconds) <= 0.1 + ((2048 * 512) / seconds) * 0.01, JSON.stringify(second.json.trend));
  assert.equal(second.json.trend.disk_write_bytes_s, 0);

  await writeFile(path.join(dir, 'collect', 'counters-fake.json'), '{"ts_ms": ');
  const afterCorrupt = await run();
  assert.equal(afterCorrupt.code, 0, afterCorrupt.stderr);
  for (const field of RATES) assert.equal(field in afterCorrupt.json.trend, false, field);
});

test('without --once it samples every --interval until SIGTERM, finishes, exits 0, and every line of the logs parses', { skip: !LINUX }, async (t) => {
  const dir = await tempDataDir(t);
  const running = startEstate(t, ['collect', '--interval', '1s', '--node', 'loop', '--data-dir', dir]);
  const trends = path.join(dir, 'trends.jsonl');
  await waitUntil('two samples', async () => (await lines(trends)).length >= 2);
  const stopped = await running.stop('SIGTERM');
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.equal(stopped.stderr, '');
  for (const log of ['trends.jsonl', 'disk.jsonl', 'health-pulse.jsonl']) {
    const text = await readFile(path.join(dir, log), 'utf8');
    assert.ok(text.endsWith('\n'), `${log} ends with a whole line`);
    for (const line of text.split('\n').filter((l) => l !== '')) assert.doesNotThrow(() => JSON.parse(line), `${log}: ${line}`);
  }
  const points = await records(trends);
  assert.ok(points.every((p) => p.node === 'loop'));
  assert.equal((await records(path.join(dir, 'health-pulse.jsonl'))).length, points.length, 'a pulse entry per trend point');
  assert.equal(stopped.stdout.trim().split('\n').length, points.length, 'a line of output per sample written');
});

test('bad input is one line and exit 2; a missing data dir is exit 2; a PostgreSQL store is one clear line', async (t) => {
  const dir = await tempDataDir(t);
  for (const interval of ['0s', '1x', 'soon']) {
    const r = await runEstate(['collect', '--interval', interval, '--data-dir', dir]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^estate: invalid --interval "[^"]+": [^\n]*\n$/);
  }
  const missing = await runEstate(['collect', '--once', '--data-dir', path.join(dir, 'nope')]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /^estate: data directory .* does not exist [^\n]*\n$/);
  const prefix = await runEstate(['collect', '--once', '--host-prefix', path.join(dir, 'nope'), '--data-dir', dir]);
  assert.equal(prefix.code, 2);
  assert.match(prefix.stderr, /^estate: host prefix .* is not a directory[^\n]*\n$/);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ collect: { interval: 'often' } }));
  const config = await runEstate(['collect', '--data-dir', dir]);
  assert.equal(config.code, 2, config.stderr);
  assert.match(config.stderr, /collect\.interval/);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ collect: { thresholds: { load_per_core: { unhealthy: 1 } } } }));
  const thresholds = await runEstate(['collect', '--once', '--data-dir', dir]);
  assert.equal(thresholds.code, 2, thresholds.stderr);
  assert.equal(thresholds.stderr, 'estate: collect.thresholds.load_per_core: unhealthy (1) is below degraded (2)\n');
  await writeFile(path.join(dir, 'estate.config.json'), '{}');
  // Nothing listens there: a store that cannot be reached is one line, and nothing goes to the data dir instead.
  const pg = await runEstate(['collect', '--once', '--store', 'postgres://estate@127.0.0.1:1/estate', '--data-dir', dir]);
  assert.equal(pg.code, 1, pg.stderr);
  assert.equal(pg.stderr, 'estate: the store postgres://estate@127.0.0.1:1/estate is unavailable (connection refused); try again later\n');
  assert.deepEqual(await lines(path.join(dir, 'trends.jsonl')), []);
});

test('collect.thresholds in the config are merged over the defaults', { skip: !LINUX }, async (t) => {
  const dir = await tempDataDir(t);
  // Every file system is at least 0% used and every machine has some memory in use: 0 makes both unhealthy; load keeps its default.
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ collect: { thresholds: { disk_used_pct: { degraded: 0, unhealthy: 0 }, mem_used_pct: { unhealthy: 0, degraded: 0 } } } }));
  const r = await runEstate(['collect', '--once', '--json', '--data-dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.json.pulse.checks.memory.status, 'unhealthy');
  const diskChecks = Object.entries(r.json.pulse.checks).filter(([name]) => name.startsWith('disk:'));
  assert.ok(diskChecks.length > 0 && diskChecks.every(([, c]: [string, any]) => c.status === 'unhealthy'), JSON.stringify(r.json.pulse));
  assert.equal(r.json.pulse.status, 'unhealthy');
});

test('serve --collect samples this node into the served data dir while it answers, and a stop finishes the sample in progress', { skip: !LINUX }, async (t) => {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ node_name: 'served' }));
  const key = await newKey(dir);
  const running = startEstate(t, ['serve', '--collect', '--interval', '1s', '--port', '0', '--data-dir', dir]);
  await running.waitForStdout('the URL line', (out) => /http:\/\/127\.0\.0\.1:\d+/.test(out));
  const url = /http:\/\/127\.0\.0\.1:\d+/.exec(running.stdout())?.[0] as string;
  const trends = path.join(dir, 'trends.jsonl');
  await waitUntil('two samples', async () => (await lines(trends)).length >= 2);
  const answer = await fetch(`${url}/trends?limit=5`, { headers: { 'X-API-Key': key } });
  assert.equal(answer.status, 200);
  const body = (await answer.json()) as { items: { node?: string; mem_total_bytes?: number }[] };
  assert.ok(body.items.length >= 2);
  assert.ok(body.items.every((p) => p.node === 'served' && typeof p.mem_total_bytes === 'number'), JSON.stringify(body.items));
  const stopped = await running.stop('SIGTERM');
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.doesNotMatch(stopped.stderr, /collect_failed/);
  for (const log of ['trends.jsonl', 'disk.jsonl', 'health-pulse.jsonl']) {
    const text = await readFile(path.join(dir, log), 'utf8');
    assert.ok(text.endsWith('\n'), `${log} ends with a whole line`);
    for (const line of text.split('\n').filter((l) => l !== '')) assert.doesNotThrow(() => JSON.parse(line), `${log}: ${line}`);
  }
  assert.equal((await records(path.join(dir, 'health-pulse.jsonl'))).length, (await records(trends)).length, 'a pulse entry per trend point');
  const heartbeat = JSON.parse(await readFile(path.join(dir, 'state', 'heartbeat.json'), 'utf8'));
  assert.deepEqual(heartbeat.nodes.map((n: { name: string }) => n.name), ['served']);
});

test('serve --interval without --collect is one line and exit 2', async (t) => {
  const dir = await tempDataDir(t);
  const run = await runEstate(['serve', '--interval', '1s', '--port', '0', '--data-dir', dir]);
  assert.equal(run.code, 2);
  assert.equal(run.stderr, 'estate: --interval is for --collect: the time between samples of this node\n');
});
