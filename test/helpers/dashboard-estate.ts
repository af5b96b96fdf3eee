import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

// A data dir the dashboard has something to show in every panel: two nodes
// whose collector-shaped samples (DESIGN.md 7a) cover the last day every
// five minutes, a stretch of degraded pulse on one (its `disk:/` at 96 %),
// a node gone stale, builds with failures, and a heartbeat. Times are
// relative to `now`, so "the last 24 hours" holds them.

export const DASHBOARD_NODES = ['db-1', 'web-1'] as const;
const STEP_MS = 5 * 60_000;
const POINTS = 288;

const jsonl = (records: readonly object[]) => records.map((r) => JSON.stringify(r)).join('\n') + '\n';

export async function writeDashboardEstate(dir: string, now: Date): Promise<void> {
  const trends: object[] = [];
  const disks: object[] = [];
  const pulses: object[] = [];
  for (let i = 0; i < POINTS; i++) {
    const ts = new Date(now.getTime() - (POINTS - 1 - i) * STEP_MS).toISOString();
    DASHBOARD_NODES.forEach((node, n) => {
      const wave = Math.sin((i / POINTS) * Math.PI * 4 + n);
      trends.push({
        ts, node, cpu_pct: 30 + 20 * wave + n * 10, load1: 1 + wave, load5: 0.9 + wave / 2, load15: 0.8 + wave / 4,
        mem_total_bytes: 8e9, mem_used_bytes: 3e9 + n * 1e9, mem_used_pct: 37.5 + n * 12.5, mem_scope: 'host', swap_used_bytes: 0, uptime_s: 86_400 + i * 300,
        net_rx_bytes_s: 120_000 + 80_000 * wave, net_tx_bytes_s: 60_000 + 30_000 * wave, disk_read_bytes_s: 4e6 + 1e6 * wave, disk_write_bytes_s: 2e6, gpu_temp_c: 55 + 5 * wave,
      });
      const rootUsed = node === 'db-1' ? 86e9 + i * 3.4e7 : 40e9;
      disks.push({ ts, node, mount: '/', fs_type: 'ext4', total_bytes: 100e9, used_bytes: rootUsed, free_bytes: 100e9 - rootUsed });
      disks.push({ ts, node, mount: '/srv', fs_type: 'xfs', total_bytes: 500e9, used_bytes: 120e9, free_bytes: 380e9 });
      const degraded = node === 'db-1' && i >= 200 && i < 240;
      const rootPct = (rootUsed / 100e9) * 100;
      pulses.push({
        ts, node, status: degraded ? 'degraded' : 'healthy',
        checks: { 'disk:/': { status: degraded ? 'degraded' : 'healthy', value: degraded ? 96 : rootPct }, memory: { status: 'healthy', value: 40 }, load: { status: 'healthy', value: 0.5 } },
      });
    });
  }
  const ago = (ms: number) => new Date(now.getTime() - ms).toISOString();
  const builds = [
    { ts: ago(20 * 3_600_000), project: 'estate', status: 'success', duration_s: 180, ref: 'main' },
    { ts: ago(12 * 3_600_000), project: 'estate', status: 'failure', duration_s: 95, ref: 'main', commit: '9f3c2a1d0b' },
    { ts: ago(6 * 3_600_000), project: 'site', status: 'success', duration_s: 40 },
    { ts: ago(3 * 3_600_000), project: 'site', status: 'cancelled' },
    { ts: ago(2 * 3_600_000), project: 'estate', status: 'success', duration_s: 170, ref: 'main' },
  ];
  await mkdir(path.join(dir, 'state'), { recursive: true });
  // Two schedules: the nightly backup checked in 2 h ago (up), the hourly report 5 h ago (down).
  await writeFile(
    path.join(dir, 'estate.config.json'),
    JSON.stringify({
      schedules: [
        { name: 'nightly-backup', board: 'ops', match: { task_id: 'backup-*' }, every: '1d', grace: '1h' },
        { name: 'hourly-report', board: 'ops', match: { task_id: 'report-*' }, every: '1h', grace: '10m' },
      ],
    }),
  );
  await mkdir(path.join(dir, 'work'), { recursive: true });
  const done = (id: string, task: string, agoMs: number) => ({ id, task_id: task, board: 'ops', assignee: 'cron', title: `run ${task}`, completed_at: ago(agoMs) });
  await writeFile(path.join(dir, 'work', 'completions.jsonl'), jsonl([done('wc_00000000000000a1', 'report-1', 5 * 3_600_000), done('wc_00000000000000a2', 'backup-1', 2 * 3_600_000)]));
  await writeFile(path.join(dir, 'trends.jsonl'), jsonl(trends));
  await writeFile(path.join(dir, 'disk.jsonl'), jsonl(disks));
  await writeFile(path.join(dir, 'health-pulse.jsonl'), jsonl(pulses));
  await writeFile(path.join(dir, 'builds.jsonl'), jsonl(builds));
  await writeFile(
    path.join(dir, 'state', 'heartbeat.json'),
    JSON.stringify({
      nodes: [
        ...DASHBOARD_NODES.map((name) => ({ name, last_seen: now.toISOString(), status: 'up' })),
        { name: 'edge-9', last_seen: ago(5 * 3_600_000), status: 'down' },
      ],
    }),
  );
}
