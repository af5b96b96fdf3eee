import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate, startEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { skipWithout } from './helpers/required-tool.ts';
import { waitUntil } from './helpers/wait-until.ts';

// A real Prometheus server (Debian's prometheus package) scraping a real
// `estate serve` on loopback with a metrics key, every second; a scraped
// value read back through Prometheus' query API.

const HAS_PROMETHEUS = spawnSync('prometheus', ['--version'], { stdio: 'ignore' }).status === 0;

/** A loopback port free now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The value of an instant query's only series, or undefined while Prometheus has none. */
async function queryOne(base: string, query: string): Promise<number | undefined> {
  const res = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(query)}`).catch(() => undefined);
  if (!res?.ok) return undefined;
  const body = (await res.json()) as { data: { result: { value: [number, string] }[] } };
  const [first] = body.data.result;
  return first === undefined ? undefined : Number(first.value[1]);
}

test('a real Prometheus scrapes estate serve with a metrics key and reads a node\'s disk share back', { timeout: 120_000 }, async (t) => {
  if (skipWithout(t, HAS_PROMETHEUS ? false : 'prometheus is not installed (apt-get install prometheus)')) return;
  const dir = await tempDataDir(t);
  const ts = new Date().toISOString();
  await writeFile(path.join(dir, 'trends.jsonl'), `${JSON.stringify({ ts, node: 'web-1', cpu_pct: 12 })}\n`);
  await writeFile(path.join(dir, 'disk.jsonl'), `${JSON.stringify({ ts, node: 'web-1', mount: '/', total_bytes: 1000, used_bytes: 250, free_bytes: 750 })}\n`);
  const created = await runEstate(['keys', 'create', '--user', 'prometheus', '--scope', 'metrics', '--json', '--data-dir', dir]);
  assert.equal(created.code, 0, created.stderr);

  const estate = startEstate(t, ['serve', '--host', '127.0.0.1', '--port', '0', '--quiet', '--data-dir', dir]);
  await estate.waitForStdout('the URL line', (out) => /http:\/\/127\.0\.0\.1:\d+/.test(out));
  const target = (/http:\/\/(127\.0\.0\.1:\d+)/.exec(estate.stdout()) as RegExpExecArray)[1] as string;

  const home = await mkdtemp(path.join(os.tmpdir(), 'estate-prometheus-'));
  t.after(() => rm(home, { recursive: true, force: true }));
  await writeFile(path.join(home, 'key'), created.json.key, { mode: 0o600 });
  await writeFile(
    path.join(home, 'prometheus.yml'),
    [
      'global:',
      '  scrape_interval: 1s',
      '  scrape_timeout: 1s',
      'scrape_configs:',
      '  - job_name: estate',
      '    authorization:',
      `      credentials_file: ${path.join(home, 'key')}`,
      '    static_configs:',
      `      - targets: ['${target}']`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const prometheus = spawn(
    'prometheus',
    [`--config.file=${path.join(home, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(home, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  prometheus.stderr.setEncoding('utf8').on('data', (c: string) => (log = (log + c).slice(-4000)));
  const exited = new Promise((r) => prometheus.once('close', r));
  t.after(async () => {
    prometheus.kill('SIGKILL');
    await exited;
  });
  const base = `http://127.0.0.1:${port}`;

  await waitUntil('Prometheus scrapes estate', async () => (await queryOne(base, 'up{job="estate"}')) === 1, 60_000).catch((err: Error) => {
    throw new Error(`${err.message}; Prometheus said: ${log}`);
  });
  await waitUntil('the disk share scraped', async () => (await queryOne(base, 'estate_disk_used_ratio{node="web-1",mount="/"}')) === 0.25, 30_000);
  assert.equal(await queryOne(base, 'estate_nodes'), 1);
  assert.equal(await queryOne(base, 'estate_node_stale{node="web-1"}'), 0);
  // Its own scrapes are counted by route, as 2xx (the key was let through).
  await waitUntil('a counted scrape', async () => ((await queryOne(base, 'estate_http_requests_total{route="/metrics",status_class="2xx"}')) ?? 0) >= 1, 30_000);
  assert.equal(await queryOne(base, 'sum(estate_http_requests_total{route="/metrics",status_class="4xx"})'), undefined, 'no scrape was refused');

  const stopped = await estate.stop('SIGTERM');
  assert.equal(stopped.code, 0, stopped.stderr);
});
