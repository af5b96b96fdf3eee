import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { test } from 'node:test';
import { takeSample } from '../src/core/collect/take-sample.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { df, tempTree } from './helpers/fake-host.ts';
import { skipWithout } from './helpers/required-tool.ts';

// takeSample against this machine's kernel, checked against what the kernel
// and df say at the same moment.

const LINUX = process.platform === 'linux';

function hasDf(): boolean {
  try {
    execFileSync('df', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

async function meminfoBytes(field: string): Promise<number> {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(await readFile('/proc/meminfo', 'utf8'));
  assert.ok(m, `${field} in /proc/meminfo`);
  return Number(m[1]) * 1024;
}

test('a sample of this machine agrees with /proc/meminfo, os.loadavg() and df -B1', { skip: !LINUX && 'Linux only' }, async (t) => {
  if (skipWithout(t, hasDf() ? false : 'df (GNU coreutils) is not installed')) return;
  const dataDir = await tempDataDir(t);
  let attempt = 0;
  for (;;) {
    const loadBefore = os.loadavg()[0]!;
    const dfBefore = df(dataDir);
    const sample = await takeSample({ node: 'here', dataDir, cpuWindowMs: 100 });
    const dfAfter = df(dataDir);
    const loadAfter = os.loadavg()[0]!;
    // Another process may write to the disk meanwhile: take both again until df agrees with itself.
    if (JSON.stringify(dfBefore) !== JSON.stringify(dfAfter) && ++attempt < 20) continue;

    const memTotal = await meminfoBytes('MemTotal');
    if (sample.trend.mem_scope === 'host') assert.equal(sample.trend.mem_total_bytes, memTotal);
    else {
      assert.equal(sample.trend.mem_scope, 'cgroup');
      assert.ok(sample.trend.mem_total_bytes! < memTotal, 'a cgroup view only below MemTotal');
    }
    const [lo, hi] = [Math.min(loadBefore, loadAfter), Math.max(loadBefore, loadAfter)];
    assert.ok(sample.trend.load1! >= lo - 0.01 && sample.trend.load1! <= hi + 0.01, `load1 ${sample.trend.load1} within [${lo}, ${hi}]`);
    assert.ok(sample.trend.cpu_pct! >= 0 && sample.trend.cpu_pct! <= 100, `cpu_pct ${sample.trend.cpu_pct}`);
    assert.ok(sample.trend.uptime_s! > 0 && sample.trend.uptime_s! <= os.uptime() + 1);

    const disk = sample.disks.find((d) => d.mount === dfAfter.mount);
    assert.ok(disk, `the data dir's file system (${dfAfter.mount}) is among ${sample.disks.map((d) => d.mount).join(', ')}`);
    assert.equal(disk.total_bytes, dfAfter.total_bytes);
    if (attempt < 20) {
      assert.equal(disk.used_bytes, dfAfter.used_bytes);
      assert.equal(disk.free_bytes, dfAfter.free_bytes);
    }
    assert.ok(sample.pulse.checks[`disk:${disk.mount}`]);
    assert.equal(new Set(sample.disks.map((d) => d.mount)).size, sample.disks.length, 'one snapshot per mount');
    return;
  }
});

test('the second sample of this machine has rates, and CPU since the first', { skip: !LINUX && 'Linux only' }, async (t) => {
  const dataDir = await tempDataDir(t);
  const first = await takeSample({ node: 'here', dataDir, cpuWindowMs: 50 });
  const second = await takeSample({ node: 'here', dataDir, previous: first.counters, now: new Date(first.counters.ts_ms + 1000) });
  for (const [counter, fields] of [['net', ['net_rx_bytes_s', 'net_tx_bytes_s']], ['disk', ['disk_read_bytes_s', 'disk_write_bytes_s']]] as const) {
    // A machine without a physical interface or disk (a container) names them instead.
    for (const field of fields) {
      if (first.counters[counter]) assert.ok(second.trend[field]! >= 0, field);
      else assert.ok(second.missing.includes(field), field);
    }
  }
  assert.ok(second.trend.cpu_pct === undefined ? second.missing.includes('cpu_pct') : second.trend.cpu_pct >= 0);
});

test('a data dir on a pseudo file system (tmpfs) is still among the snapshots', { skip: !LINUX && 'Linux only' }, async (t) => {
  const shm = df('/dev/shm');
  if (shm.fs_type !== 'tmpfs') return t.skip('/dev/shm is not a tmpfs here');
  const dataDir = await tempTree(t, '/dev/shm');
  const sample = await takeSample({ node: 'here', dataDir, cpuWindowMs: 1 });
  const disk = sample.disks.find((d) => d.mount === shm.mount);
  assert.equal(disk?.fs_type, 'tmpfs');
  assert.equal(disk?.total_bytes, shm.total_bytes);
});
