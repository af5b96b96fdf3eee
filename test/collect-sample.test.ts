import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { takeSample } from '../src/core/collect/take-sample.ts';
import { DEFAULT_THRESHOLDS, type Sample, type SampleOptions, type Thresholds } from '../src/core/collect/sample-types.ts';
import { df, tempTree, writeTree, type DfFigures, type FakeTree } from './helpers/fake-host.ts';

// takeSample on a fake host root (the --host-prefix layout) whose /proc and
// /sys files the test wrote: every kernel figure exact, rates from known
// counter deltas, what cannot be read left out and named.

const LINUX = process.platform === 'linux';
const SHM = '/dev/shm';
const MIB = 1024 * 1024;

// Disk status is left to the disk-threshold test: the fake host's file systems are real ones of this machine.
const NO_DISK_ALARM: Thresholds = { ...DEFAULT_THRESHOLDS, disk_used_pct: { degraded: 1000, unhealthy: 1000 } };

function netDev(rows: Record<string, [number, number]>): string {
  const head = 'Inter-|   Receive                                                |  Transmit\n face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n';
  return head + Object.entries(rows).map(([name, [rx, tx]]) => `${name.padStart(6)}: ${rx} 10 0 0 0 0 0 0 ${tx} 20 0 0 0 0 0 0\n`).join('');
}

function diskstats(rows: Record<string, [number, number]>): string {
  return Object.entries(rows)
    .map(([name, [read, written]], i) => `   8       ${i} ${name} 100 3 ${read} 40 200 5 ${written} 60 0 70 80 0 0 0 0 0 0\n`)
    .join('');
}

function host(o: { stat?: string; load?: string; mem?: [number, number, number, number]; net?: Record<string, [number, number]>; disk?: Record<string, [number, number]> } = {}): FakeTree {
  const [memTotal, memAvail, swapTotal, swapFree] = o.mem ?? [8_000_000, 2_000_000, 1_000_000, 250_000];
  return {
    files: {
      'proc/stat': o.stat ?? 'cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 50 0 25 400 25 0 0 0 0 0\ncpu1 50 0 25 400 25 0 0 0 0 0\nintr 1 2 3\n',
      'proc/loadavg': o.load ?? '3.00 2.50 1.25 2/345 6789\n',
      'proc/meminfo': `MemTotal:       ${memTotal} kB\nMemFree:          100000 kB\nMemAvailable:   ${memAvail} kB\nBuffers:           1000 kB\nSwapTotal:      ${swapTotal} kB\nSwapFree:       ${swapFree} kB\nHugePages_Total:       0\n`,
      'proc/uptime': '12345.67 20000.00\n',
      // The host's network is PID 1's: the container's own, proc/net/dev, must not be read with a prefix.
      'proc/1/net/dev': netDev(o.net ?? { lo: [9_999_999, 9_999_999], eth0: [1_000_000, 500_000], veth12ab: [777_777, 777_777], wlan0: [200_000, 100_000] }),
      'proc/net/dev': netDev({ eth0: [5, 5] }),
      'proc/diskstats': diskstats(o.disk ?? { sda: [10_000, 20_000], sda1: [9_000, 19_000], 'dm-0': [8_000, 8_000], loop0: [7_000, 7_000], nvme0n1: [4_000, 6_000] }),
      'proc/1/mountinfo': [
        '20 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw',
        '21 20 0:5 / /proc rw - proc proc rw',
        '22 20 0:20 / /run rw,nosuid - tmpfs tmpfs rw,size=100k',
        '23 20 8:2 / /srv/my\\040data rw shared:5 master:1 - xfs /dev/sda2 rw',
        '24 20 8:1 /var/lib/x/hosts /etc/hosts rw - ext4 /dev/sda1 rw',
        '25 20 0:50 / /var/lib/docker/overlay2/abc/merged rw - overlay overlay rw,lowerdir=/a',
        '26 20 7:0 / /snap/core/1 ro - squashfs /dev/loop0 ro',
        '27 20 0:60 / /mnt/share rw - nfs4 server:/x rw',
        '28 20 0:61 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw',
        // A bind mount of part of a file system shown whole elsewhere: the whole one names it, though its path is longer.
        '29 20 8:2 /sub /b rw - xfs /dev/sda2 rw',
        '',
      ].join('\n'),
    },
    dirs: ['srv/my data', 'etc', 'sys/class/net/lo', 'sys/class/net/veth12ab', 'sys/block/dm-0', 'sys/block/loop0'],
    deviceLinks: ['sys/class/net/eth0/device', 'sys/class/net/wlan0/device', 'sys/block/sda/device', 'sys/block/nvme0n1/device'],
  };
}

/** A fake host root on /dev/shm (a quiet file system, so df and the sample agree byte for byte), and a data dir outside it. */
async function fakeHost(t: TestContext, tree = host()): Promise<{ root: string; dataDir: string }> {
  const root = await tempTree(t, SHM);
  await writeTree(root, tree);
  return { root, dataDir: await tempTree(t) };
}

const T0 = new Date('2026-11-28T01:00:00.000Z');

function options(root: string, dataDir: string, extra: Partial<SampleOptions> = {}): SampleOptions {
  return { node: 'web-1', root, dataDir, now: T0, cpuWindowMs: 1, thresholds: NO_DISK_ALARM, ...extra };
}

// The sample and df of each dir, taken again until df says the same before and after (another process may write meanwhile).
async function sampleBesideDf(opts: SampleOptions, dirs: string[]): Promise<{ sample: Sample; dfs: DfFigures[] }> {
  for (let attempt = 0; ; attempt++) {
    const before = dirs.map(df);
    const sample = await takeSample(opts);
    const after = dirs.map(df);
    if (JSON.stringify(before) === JSON.stringify(after) || attempt === 20) return { sample, dfs: after };
  }
}

const PREVIOUS_CPU = { busy: 100, total: 600 };

test('a fake host root gives exact figures, the host view, disks as df computes them', { skip: !LINUX && 'Linux only' }, async (t) => {
  const { root, dataDir } = await fakeHost(t);
  const previous = { ts_ms: T0.getTime() - 10_000, cpu: PREVIOUS_CPU };
  const { sample, dfs } = await sampleBesideDf(options(root, dataDir, { previous }), [root, path.join(root, 'srv/my data')]);
  assert.deepEqual(sample.trend, {
    ts: '2026-11-28T01:00:00.000Z',
    node: 'web-1',
    cpu_pct: 12.5, // (150 - 100) busy of (1000 - 600) ticks
    load1: 3,
    load5: 2.5,
    load15: 1.25,
    mem_total_bytes: 8_000_000 * 1024,
    mem_used_bytes: 6_000_000 * 1024,
    mem_used_pct: 75,
    mem_scope: 'host',
    swap_used_bytes: 750_000 * 1024,
    uptime_s: 12345,
    // No previous net or disk counters: no rates, and none named missing.
  });
  const [rootDf, dataDf] = dfs as [DfFigures, DfFigures];
  const sized = (d: DfFigures) => ({ total_bytes: d.total_bytes, used_bytes: d.used_bytes, free_bytes: d.free_bytes });
  assert.deepEqual(sample.disks, [
    { ts: '2026-11-28T01:00:00.000Z', node: 'web-1', mount: '/', fs_type: 'ext4', ...sized(rootDf) },
    { ts: '2026-11-28T01:00:00.000Z', node: 'web-1', mount: '/srv/my data', fs_type: 'xfs', ...sized(dataDf) },
  ]);
  assert.deepEqual(sample.missing, []);
  const pct = (d: DfFigures) => Math.round((d.used_bytes / (d.used_bytes + d.free_bytes)) * 1000) / 10;
  assert.deepEqual(sample.pulse, {
    ts: '2026-11-28T01:00:00.000Z',
    node: 'web-1',
    status: 'healthy',
    checks: {
      'disk:/': { status: 'healthy', value: pct(rootDf) },
      'disk:/srv/my data': { status: 'healthy', value: pct(dataDf) },
      memory: { status: 'healthy', value: 75 },
      load: { status: 'healthy', value: 1.5 },
    },
  });
  assert.deepEqual(sample.heartbeatEntry, { name: 'web-1', last_seen: '2026-11-28T01:00:00.000Z', status: 'healthy' });
  assert.deepEqual(sample.counters, {
    ts_ms: T0.getTime(),
    cpu: { busy: 150, total: 1000 },
    net: { eth0: { rx: 1_000_000, tx: 500_000 }, wlan0: { rx: 200_000, tx: 100_000 } },
    disk: { sda: { read: 10_000 * 512, write: 20_000 * 512 }, nvme0n1: { read: 4_000 * 512, write: 6_000 * 512 } },
  });
});

test('rates come from two samples: counter deltas over the time between them', { skip: !LINUX && 'Linux only' }, async (t) => {
  const { root, dataDir } = await fakeHost(t);
  const first = await takeSample(options(root, dataDir));
  for (const field of ['net_rx_bytes_s', 'net_tx_bytes_s', 'disk_read_bytes_s', 'disk_write_bytes_s']) assert.equal(field in first.trend, false, field);
  // The fake CPU counters do not move during the first sample's window: no CPU figure, and it says so.
  assert.equal('cpu_pct' in first.trend, false);
  assert.deepEqual(first.missing, ['cpu_pct']);

  await writeTree(root, host({
    stat: 'cpu  500 0 150 1200 150 0 0 0 0 0\ncpu0 1 1 1 1\ncpu1 1 1 1 1\n',
    net: { lo: [1, 1], eth0: [1_600_000, 700_000], veth12ab: [1, 1], wlan0: [300_000, 150_000], eth9: [5_000_000, 5_000_000] },
    disk: { sda: [16_000, 30_000], sda1: [0, 0], nvme0n1: [6_000, 6_000] },
  }));
  const second = await takeSample(options(root, dataDir, { previous: first.counters, now: new Date(T0.getTime() + 8_000) }));
  assert.equal(second.trend.cpu_pct, 50); // busy 150 → 650 of 1000 → 2000 ticks
  assert.equal(second.trend.net_rx_bytes_s, 87_500); // (600,000 + 100,000) / 8 s; eth9 new, lo and veth virtual
  assert.equal(second.trend.net_tx_bytes_s, 31_250); // (200,000 + 50,000) / 8 s
  assert.equal(second.trend.disk_read_bytes_s, 512_000); // (6,000 + 2,000) sectors × 512 / 8 s; sda1 a partition
  assert.equal(second.trend.disk_write_bytes_s, 640_000); // 10,000 sectors × 512 / 8 s
  assert.deepEqual(second.missing, []);
});

test('a counter that went backwards leaves its rates out, unnamed in the pulse', { skip: !LINUX && 'Linux only' }, async (t) => {
  const { root, dataDir } = await fakeHost(t);
  const previous = {
    ts_ms: T0.getTime() - 10_000,
    cpu: { busy: 200, total: 2000 }, // after a reboot: CPU from the window instead
    net: { eth0: { rx: 2_000_000, tx: 400_000 }, wlan0: { rx: 100_000, tx: 50_000 } },
    disk: { sda: { read: 5_000 * 512, write: 10_000 * 512 }, nvme0n1: { read: 2_000 * 512, write: 6_000 * 512 } },
  };
  const sample = await takeSample(options(root, dataDir, { previous }));
  assert.equal('net_rx_bytes_s' in sample.trend, false);
  assert.equal('net_tx_bytes_s' in sample.trend, false);
  assert.equal(sample.trend.disk_read_bytes_s, 358_400); // (5,000 + 2,000) × 512 / 10 s
  assert.equal(sample.trend.disk_write_bytes_s, 512_000);
  assert.equal(sample.missing.some((m) => m.startsWith('net_')), false);
  assert.equal(sample.counters.net?.eth0?.rx, 1_000_000, 'the new counters are kept for the next sample');
});

test('a figure that cannot be read is left out (never 0) and named in the pulse check collector', { skip: !LINUX && 'Linux only' }, async (t) => {
  const cases: { name: string; remove: string[]; fields: string[]; named: string[] }[] = [
    { name: 'proc/loadavg', remove: ['proc/loadavg'], fields: ['load1', 'load5', 'load15'], named: ['load1', 'load5', 'load15'] },
    { name: 'proc/meminfo', remove: ['proc/meminfo'], fields: ['mem_total_bytes', 'mem_used_bytes', 'mem_used_pct', 'mem_scope', 'swap_used_bytes'], named: ['mem_total_bytes', 'mem_used_bytes', 'mem_used_pct', 'swap_used_bytes'] },
    { name: 'proc/uptime', remove: ['proc/uptime'], fields: ['uptime_s'], named: ['uptime_s'] },
    { name: 'proc/stat', remove: ['proc/stat'], fields: ['cpu_pct'], named: ['cpu_pct'] },
    { name: 'proc/1/net/dev', remove: ['proc/1/net/dev'], fields: ['net_rx_bytes_s', 'net_tx_bytes_s'], named: ['net_rx_bytes_s', 'net_tx_bytes_s'] },
    { name: 'proc/diskstats', remove: ['proc/diskstats'], fields: ['disk_read_bytes_s', 'disk_write_bytes_s'], named: ['disk_read_bytes_s', 'disk_write_bytes_s'] },
    { name: 'no physical interface', remove: ['sys/class/net/eth0', 'sys/class/net/wlan0'], fields: ['net_rx_bytes_s'], named: ['net_rx_bytes_s', 'net_tx_bytes_s'] },
    { name: 'a mount point', remove: ['srv/my data'], fields: [], named: ['disk:/srv/my data'] },
    { name: 'proc/1/mountinfo', remove: ['proc/1/mountinfo'], fields: [], named: ['mounts'] },
  ];
  for (const c of cases) {
    await t.test(c.name, async (t) => {
      const { root, dataDir } = await fakeHost(t);
      const previous = { ...(await takeSample(options(root, dataDir))).counters, ts_ms: T0.getTime() - 10_000, cpu: PREVIOUS_CPU };
      for (const rel of c.remove) await rm(path.join(root, rel), { recursive: true });
      const sample = await takeSample(options(root, dataDir, { previous }));
      for (const field of c.fields) assert.equal(field in sample.trend, false, `${field} left out`);
      assert.deepEqual(sample.missing, c.named);
      const collector = sample.pulse.checks.collector;
      assert.equal(collector?.status, 'degraded');
      assert.deepEqual(collector?.value, c.named);
      assert.match(String(collector?.message), new RegExp(c.named[0]!.replace(/[/:]/g, '.')));
      assert.notEqual(sample.pulse.status, 'healthy');
      assert.equal(sample.heartbeatEntry.status, sample.pulse.status);
      // Everything else is still there.
      if (!c.named.includes('uptime_s')) assert.equal(sample.trend.uptime_s, 12345);
      if (c.name === 'a mount point') assert.deepEqual(sample.disks.map((d) => d.mount), ['/']);
      if (c.name === 'proc/1/mountinfo') assert.deepEqual(sample.disks.map((d) => d.mount), ['/'], "the data dir's file system is still in");
    });
  }
});

test('memory and load take the status of the threshold they reach, at or above it', { skip: !LINUX && 'Linux only' }, async (t) => {
  // 2 cores; MemTotal 1,000,000 kB.
  const cases: { name: string; avail?: number; load?: string; check: 'memory' | 'load'; value: number; status: string }[] = [
    { name: 'memory just below degraded', avail: 101_000, check: 'memory', value: 89.9, status: 'healthy' },
    { name: 'memory at degraded', avail: 100_000, check: 'memory', value: 90, status: 'degraded' },
    { name: 'memory just below unhealthy', avail: 31_000, check: 'memory', value: 96.9, status: 'degraded' },
    { name: 'memory at unhealthy', avail: 30_000, check: 'memory', value: 97, status: 'unhealthy' },
    { name: 'load just below degraded', load: '3.98 1 1 1/1 1', check: 'load', value: 1.99, status: 'healthy' },
    { name: 'load at degraded', load: '4.00 1 1 1/1 1', check: 'load', value: 2, status: 'degraded' },
    { name: 'load just below unhealthy', load: '7.98 1 1 1/1 1', check: 'load', value: 3.99, status: 'degraded' },
    { name: 'load at unhealthy', load: '8.00 1 1 1/1 1', check: 'load', value: 4, status: 'unhealthy' },
  ];
  for (const c of cases) {
    await t.test(c.name, async (t) => {
      const { root, dataDir } = await fakeHost(t, host({ mem: [1_000_000, c.avail ?? 500_000, 0, 0], load: c.load }));
      const sample = await takeSample(options(root, dataDir, { previous: { ts_ms: 0, cpu: PREVIOUS_CPU } }));
      assert.deepEqual(sample.pulse.checks[c.check], { status: c.status, value: c.value });
      assert.equal(sample.pulse.status, c.status);
      assert.equal(sample.heartbeatEntry.status, c.status);
    });
  }
});

test('a file system takes the status of the disk threshold it reaches', { skip: !LINUX && 'Linux only' }, async (t) => {
  const { root, dataDir } = await fakeHost(t);
  const used = df(root);
  const pct = Math.round((used.used_bytes / (used.used_bytes + used.free_bytes)) * 1000) / 10;
  const cases: [string, Thresholds['disk_used_pct'], string][] = [
    ['below both', { degraded: pct + 0.1, unhealthy: pct + 0.2 }, 'healthy'],
    ['at degraded', { degraded: pct, unhealthy: pct + 0.1 }, 'degraded'],
    ['at unhealthy', { degraded: pct - 0.1, unhealthy: pct }, 'unhealthy'],
  ];
  for (const [name, disk, status] of cases) {
    await t.test(name, async () => {
      const { sample } = await sampleBesideDf(options(root, dataDir, { thresholds: { ...NO_DISK_ALARM, disk_used_pct: disk }, previous: { ts_ms: 0, cpu: PREVIOUS_CPU } }), [root]);
      assert.deepEqual(sample.pulse.checks['disk:/'], { status, value: pct });
      assert.equal(sample.pulse.status, status);
    });
  }
});

test("with a prefix, the data dir's file system is added when no host mount shows it", { skip: !LINUX && 'Linux only' }, async (t) => {
  const tree = host();
  tree.files!['proc/1/mountinfo'] = '23 20 8:2 / /srv/my\\040data rw - xfs /dev/sda2 rw\n';
  const { root, dataDir } = await fakeHost(t, tree);
  const own = df(dataDir);
  const { sample } = await sampleBesideDf(options(root, dataDir, { previous: { ts_ms: 0, cpu: PREVIOUS_CPU } }), [dataDir]);
  assert.deepEqual(sample.disks.map((d) => d.mount), ['/srv/my data', own.mount]);
  assert.equal(sample.disks[1]?.fs_type, own.fs_type);
  assert.equal(sample.disks[1]?.total_bytes, own.total_bytes);
});

test("meminfo's kB are KiB, and memory all used is unhealthy", { skip: !LINUX && 'Linux only' }, async (t) => {
  const { root, dataDir } = await fakeHost(t, host({ mem: [1024, 0, 2048, 1024] }));
  const sample = await takeSample(options(root, dataDir, { previous: { ts_ms: 0, cpu: PREVIOUS_CPU } }));
  assert.equal(sample.trend.mem_total_bytes, 1 * MIB);
  assert.equal(sample.trend.mem_used_pct, 100);
  assert.equal(sample.trend.swap_used_bytes, 1 * MIB);
  assert.equal(sample.pulse.checks.memory?.status, 'unhealthy');
});
