import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { takeSample } from '../src/core/collect/take-sample.ts';
import { tempTree, writeTree, type FakeTree } from './helpers/fake-host.ts';

// Without a host prefix, in a cgroup whose memory limit is below MemTotal,
// the trend point is the container's view: total = the limit, used = usage
// minus inactive file cache (v2 and v1). The cgroup tree is fake (the
// option `cgroupRoot`); MemTotal is this machine's.

const LINUX = process.platform === 'linux';
const LIMIT = 512 * 1024 * 1024;
const V1_UNLIMITED = '9223372036854771712';

async function memTotal(): Promise<number> {
  const m = /^MemTotal:\s+(\d+) kB$/m.exec(await readFile('/proc/meminfo', 'utf8'));
  return Number(m?.[1]) * 1024;
}

const v2 = (max: string, current = '300000000', stat = 'anon 1000\nfile 9\nactive_file 7\ninactive_file 50000000\n'): FakeTree => ({
  files: { 'cgroup.controllers': 'cpu memory pids\n', 'memory.max': `${max}\n`, 'memory.current': `${current}\n`, 'memory.stat': stat },
});
// v1 names its hierarchical figures `total_…`: the cgroup's own `inactive_file` is not the one to subtract.
const v1 = (limit: string): FakeTree => ({
  files: {
    'memory/memory.limit_in_bytes': `${limit}\n`,
    'memory/memory.usage_in_bytes': '400000000\n',
    'memory/memory.stat': 'cache 5\ninactive_file 1\ntotal_cache 5\ntotal_inactive_file 100000000\n',
  },
});

test('a cgroup limit below MemTotal gives the cgroup view, exactly (v2 and v1)', { skip: !LINUX && 'Linux only' }, async (t) => {
  const cases: [string, FakeTree, number][] = [
    ['v2: memory.max, memory.current − inactive_file', v2(String(LIMIT)), 250_000_000],
    ['v1: memory.limit_in_bytes, memory.usage_in_bytes − total_inactive_file', v1(String(LIMIT)), 300_000_000],
  ];
  for (const [name, tree, used] of cases) {
    await t.test(name, async (t) => {
      const cgroupRoot = await tempTree(t);
      await writeTree(cgroupRoot, tree);
      const sample = await takeSample({ node: 'box', dataDir: await tempTree(t), cgroupRoot, cpuWindowMs: 50 });
      assert.equal(sample.trend.mem_scope, 'cgroup');
      assert.equal(sample.trend.mem_total_bytes, LIMIT);
      assert.equal(sample.trend.mem_used_bytes, used);
      assert.equal(sample.trend.mem_used_pct, Math.round((used / LIMIT) * 1000) / 10);
      assert.deepEqual(sample.pulse.checks.memory, { status: 'healthy', value: sample.trend.mem_used_pct });
      assert.equal(sample.missing.some((m) => m.startsWith('mem')), false);
    });
  }
});

test('no cgroup limit, or one at or above MemTotal, gives the host view', { skip: !LINUX && 'Linux only' }, async (t) => {
  const total = await memTotal();
  const cases: [string, FakeTree][] = [
    ['v2 max', v2('max')],
    ['v2 limit equal to MemTotal', v2(String(total))],
    ['v1 unlimited', v1(V1_UNLIMITED)],
    ['no cgroup memory files', { files: { 'cgroup.controllers': 'cpu\n' } }],
  ];
  for (const [name, tree] of cases) {
    await t.test(name, async (t) => {
      const cgroupRoot = await tempTree(t);
      await writeTree(cgroupRoot, tree);
      const sample = await takeSample({ node: 'box', dataDir: await tempTree(t), cgroupRoot, cpuWindowMs: 50 });
      assert.equal(sample.trend.mem_scope, 'host');
      assert.equal(sample.trend.mem_total_bytes, total);
    });
  }
});

test('a host prefix never takes the cgroup view', { skip: !LINUX && 'Linux only' }, async (t) => {
  const cgroupRoot = await tempTree(t);
  await writeTree(cgroupRoot, v2(String(LIMIT)));
  const root = await tempTree(t);
  await writeTree(root, { files: { 'proc/meminfo': 'MemTotal: 8000000 kB\nMemAvailable: 6000000 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n' } });
  const sample = await takeSample({ node: 'box', root, dataDir: await tempTree(t), cgroupRoot, cpuWindowMs: 1 });
  assert.equal(sample.trend.mem_scope, 'host');
  assert.equal(sample.trend.mem_total_bytes, 8_000_000 * 1024);
  assert.equal(sample.trend.mem_used_pct, 25);
});

test("a cgroup's usage that cannot be read is left out and named; the limit stays the total", { skip: !LINUX && 'Linux only' }, async (t) => {
  const cgroupRoot = await tempTree(t);
  await writeTree(cgroupRoot, { files: { 'memory.max': `${LIMIT}\n` } });
  const sample = await takeSample({ node: 'box', dataDir: await tempTree(t), cgroupRoot, cpuWindowMs: 50 });
  assert.equal(sample.trend.mem_scope, 'cgroup');
  assert.equal(sample.trend.mem_total_bytes, LIMIT);
  assert.equal('mem_used_bytes' in sample.trend, false);
  assert.equal('mem_used_pct' in sample.trend, false);
  assert.deepEqual(sample.missing.filter((m) => m.startsWith('mem')), ['mem_used_bytes', 'mem_used_pct']);
  assert.deepEqual(sample.pulse.checks.collector?.value, sample.missing);
  assert.equal(sample.pulse.checks.memory?.status, 'degraded');
});
