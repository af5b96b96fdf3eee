import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createContext } from '../api/context.ts';
import { loadConfig } from '../config.ts';
import { initDataDir } from '../core/init-data-dir.ts';
import { createApp } from './create-app.ts';
import { listen } from './listen.ts';

// A server's first requests run on cold code: V8 parses each function at its
// first call and runs it in its interpreter until it has been called often
// enough to compile. On a hub that is its first second: 200 nodes sending at
// once wait 100-230 ms each (p50) where a second later they wait 14 ms
// (BENCHMARKS.md, "Issue 24: the hub"). `warmUp` pays that cost before the
// server listens, on a throwaway data dir of its own: the served store and its
// clients see none of it.

/** How many batches go through the hub's path before the server listens: enough for V8 to compile it, a fraction of a second. */
export const WARM_UP_BATCHES = 12;
const NODES = 3;
const BATCH = 25;

/**
 * Sends WARM_UP_BATCHES batches of samples to `POST /ingest`, then reads
 * each node back through `/trends?node=` and `/nodes`, on a server of its own
 * over a temporary data dir on 127.0.0.1, and removes it all. Best effort: a
 * failure here (no room in the temp dir) only leaves the code cold.
 */
export async function warmUp(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'estate-warm-up-'));
  try {
    await initDataDir(dir);
    const ctx = createContext(dir, loadConfig(dir, undefined, {}), {});
    try {
      const apiKey = randomBytes(18).toString('hex');
      const app = createApp(ctx, { envApiKey: apiKey });
      const running = await listen(app, { host: '127.0.0.1', port: 0 });
      try {
        const start = Date.now() - 86_400_000;
        for (let b = 0; b < WARM_UP_BATCHES; b++) {
          const node = `warm-up-${b % NODES}`;
          const samples = Array.from({ length: BATCH }, (_, i) => sample(node, new Date(start + (b * BATCH + i) * 1000).toISOString(), i));
          await call(running.url, 'POST', '/ingest', apiKey, JSON.stringify({ samples }));
        }
        for (let n = 0; n < NODES; n++) await call(running.url, 'GET', `/trends?node=warm-up-${n}&limit=10`, apiKey);
        await call(running.url, 'GET', '/nodes', apiKey);
      } finally {
        await running.close();
        await app.close();
      }
    } finally {
      await ctx.store.close();
    }
  } catch {
    // The code stays cold; the server starts all the same.
  } finally {
    await rm(dir, { recursive: true, force: true }).catch(() => {});
  }
}

/** One request on a connection of its own; resolves once its answer has been read. */
function call(url: string, method: string, route: string, apiKey: string, body?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { 'X-API-Key': apiKey };
    if (body !== undefined) Object.assign(headers, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    const req = request(`${url}${route}`, { method, headers, timeout: 10_000 }, (res) => {
      res.resume();
      res.on('end', resolve);
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('warm-up request timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

/** A sample as `estate collect` takes it: a trend point, two file systems and a pulse. */
function sample(node: string, ts: string, i: number) {
  const disks = ['/', '/home'].map((mount, m) => ({ ts, node, mount, fs_type: 'ext4', total_bytes: 100e9, used_bytes: 40e9 + m + i, free_bytes: 55e9 }));
  return {
    trend: {
      ts, node, cpu_pct: i % 100, load1: 0.5, load5: 0.4, load15: 0.3, mem_total_bytes: 8e9, mem_used_bytes: 3e9 + i, mem_used_pct: 37.5, mem_scope: 'host',
      swap_used_bytes: 0, uptime_s: 86_400 + i, net_rx_bytes_s: 1200, net_tx_bytes_s: 800, disk_read_bytes_s: 4096, disk_write_bytes_s: 8192,
    },
    disks,
    pulse: { ts, node, status: 'healthy', checks: { memory: { status: 'healthy', value: 37.5 }, 'disk:/': { status: 'healthy', value: 40 } } },
  };
}
