import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { VERSION } from '../src/version.ts';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { HAS_PROMTOOL, parseExposition, promtoolCheck, valueOf } from './helpers/exposition.ts';
import { skipWithout } from './helpers/required-tool.ts';
import { newKey, startServer } from './helpers/server.ts';

// GET /metrics: the real server on a temp data dir holding two nodes'
// series, scraped over HTTP with keys made by the real CLI.

const line = (record: Record<string, unknown>) => `${JSON.stringify(record)}\n`;
const ago = (s: number) => new Date(Date.now() - s * 1000).toISOString();

async function estateOfTwoNodes(t: Parameters<typeof tempDataDir>[0]) {
  const dir = await tempDataDir(t);
  // web-1 sent a sample 30 s ago; db-1 two hours ago (stale past the default 900 s).
  await writeFile(path.join(dir, 'trends.jsonl'), line({ ts: ago(7200), node: 'db-1', cpu_pct: 3 }) + line({ ts: ago(30), node: 'web-1', cpu_pct: 40 }));
  await writeFile(
    path.join(dir, 'disk.jsonl'),
    line({ ts: ago(7200), node: 'db-1', mount: '/', total_bytes: 100, used_bytes: 10, free_bytes: 90 }) +
      line({ ts: ago(90), node: 'web-1', mount: '/', total_bytes: 1000, used_bytes: 100, free_bytes: 800 }) +
      line({ ts: ago(30), node: 'web-1', mount: '/', total_bytes: 1000, used_bytes: 300, free_bytes: 600 }) +
      line({ ts: ago(30), node: 'web-1', mount: '/data', total_bytes: 4000, used_bytes: 3000, free_bytes: 1000 }),
  );
  await writeFile(
    path.join(dir, 'health-pulse.jsonl'),
    line({ ts: ago(7200), node: 'db-1', status: 'healthy', checks: {} }) +
      line({ ts: ago(30), node: 'web-1', status: 'degraded', checks: { 'disk:/data': { status: 'degraded', value: 75 } } }) +
      line({ ts: ago(10), status: 'unhealthy', checks: {} }),
  );
  await writeFile(
    path.join(dir, 'builds.jsonl'),
    [ago(10 * 86_400), ago(3600), ago(600), ago(60)]
      .map((ts, i) => line({ ts, project: 'estate', status: i === 1 ? 'success' : i === 0 ? 'success' : 'failure', duration_s: 30 }))
      .join(''),
  );
  return dir;
}

async function metricsKey(dir: string): Promise<string> {
  const r = await runEstate(['keys', 'create', '--user', 'prometheus', '--scope', 'metrics', '--name', 'scraper', '--json', '--data-dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.json.scopes, ['metrics']);
  return r.json.key as string;
}

test('/metrics needs a credential with the metrics or read scope; a metrics key opens nothing else', async (t) => {
  const dir = await estateOfTwoNodes(t);
  const scraper = await metricsKey(dir);
  const reader = await newKey(dir);
  const server = await startServer(t, dir);

  const anonymous = await server.get('/metrics');
  assert.equal(anonymous.status, 403);
  assert.match(anonymous.json.detail, /Not authenticated/);
  const bad = await server.get('/metrics', { Authorization: 'Bearer not-a-key' });
  assert.equal(bad.status, 403);

  for (const headers of [{ Authorization: `Bearer ${scraper}` }, { 'X-API-Key': scraper }, { 'X-API-Key': reader }] as Record<string, string>[]) {
    const r = await server.get('/metrics', headers);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
    assert.equal(r.headers.get('cache-control'), 'no-store');
  }
  const elsewhere = await server.get('/trends', { 'X-API-Key': scraper });
  assert.equal(elsewhere.status, 403);
  assert.match(elsewhere.json.detail, /lacks the "read" scope/);

  const bound = await runEstate(['keys', 'create', '--user', 'p', '--scope', 'metrics', '--node', 'web-1', '--data-dir', dir]);
  assert.equal(bound.code, 2);
  assert.match(bound.stderr, /--node needs --scope ingest/);
});

test('/metrics counts requests by route template and status class, never by the path sent; promtool accepts it', async (t) => {
  const dir = await estateOfTwoNodes(t);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const auth = { 'X-API-Key': key };
  for (let i = 0; i < 3; i++) assert.equal((await server.get('/trends?limit=1', auth)).status, 200);
  assert.equal((await server.get('/state/heartbeat', auth)).status, 404, 'no heartbeat yet');
  assert.equal((await server.get('/state/not-a-state-file', auth)).status, 422);
  assert.equal((await server.get('/no/such/route/secret-looking-token', auth)).status, 404);
  assert.equal((await server.get('/trends')).status, 403);

  const r = await server.get('/metrics', auth);
  assert.equal(r.status, 200);
  const samples = parseExposition(r.text);
  const requests = (labels: Record<string, string>) => valueOf(samples, 'estate_http_requests_total', { method: 'GET', ...labels });
  assert.equal(requests({ route: '/trends', status_class: '2xx' }), 3);
  assert.equal(requests({ route: '/trends', status_class: '4xx' }), 1);
  assert.equal(requests({ route: '/state/{file_name}', status_class: '4xx' }), 2);
  assert.equal(requests({ route: '(none)', status_class: '4xx' }), 1);
  assert.equal(valueOf(samples, 'estate_http_request_duration_seconds_count', { route: '/trends', method: 'GET' }), 4);
  assert.equal(valueOf(samples, 'estate_http_request_duration_seconds_bucket', { route: '/trends', method: 'GET', le: '+Inf' }), 4);
  assert.ok(!r.text.includes('secret-looking-token') && !r.text.includes('not-a-state-file'), 'no path sent is a label value');
  // The scrape itself is in flight while it is answered.
  assert.equal(valueOf(samples, 'estate_http_requests_in_flight'), 1);
  assert.equal(valueOf(samples, 'estate_http_requests_refused_total', { reason: 'rate_limited' }), 0);
  assert.equal(valueOf(samples, 'estate_build_info', { version: VERSION }), 1);
  for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_p99_seconds']) {
    assert.ok(samples.some((s) => s.name === name), `${name} is there`);
  }

  if (skipWithout(t, HAS_PROMTOOL ? false : "promtool is not installed (apt-get install prometheus)")) return;
  const checked = promtoolCheck(r.text);
  assert.equal(checked.status, 0, checked.output);
});

test('/metrics counts as overloaded only the 503s that shed load, and leaves the event streams out of the latency histogram', async (t) => {
  const dir = await estateOfTwoNodes(t);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ serve: { streams: { max_open: 1 } } }));
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const auth = { 'X-API-Key': key };
  // The one stream the server allows, open; a second is refused to protect the server (503, an overload).
  const open = new AbortController();
  const stream = await fetch(`${server.url}/work/stream`, { headers: auth, signal: open.signal });
  assert.equal(stream.status, 200);
  assert.equal((await server.get('/work/stream', auth)).status, 503);
  // A 503 that is no overload: the outbox is damaged (it says so, and is left as it is).
  await mkdir(path.join(dir, 'notify'), { recursive: true });
  await writeFile(path.join(dir, 'notify', 'outbox.json'), '{not json');
  assert.equal((await server.get('/notify/deliveries', auth)).status, 503);
  open.abort();
  await stream.body?.cancel().catch(() => {});

  let samples = parseExposition((await server.get('/metrics', auth)).text);
  const streams = () => ['2xx', '5xx', 'aborted'].reduce((n, status_class) => n + (valueOf(samples, 'estate_http_requests_total', { route: '/work/stream', method: 'GET', status_class }) ?? 0), 0);
  for (let i = 0; i < 100 && streams() < 2; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    samples = parseExposition((await server.get('/metrics', auth)).text);
  }
  assert.equal(streams(), 2, 'the stream, once it ended, and the refused one');
  assert.equal(valueOf(samples, 'estate_http_requests_refused_total', { reason: 'overloaded' }), 1);
  assert.equal(valueOf(samples, 'estate_http_requests_total', { route: '/notify/deliveries', method: 'GET', status_class: '5xx' }), 1);
  assert.equal(valueOf(samples, 'estate_http_request_duration_seconds_count', { route: '/work/stream', method: 'GET' }), 1, 'only the refused stream request is timed');
});

test("/metrics reports each node's last sign of life, staleness, pulse and file systems, read from the series", async (t) => {
  const dir = await estateOfTwoNodes(t);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const samples = parseExposition((await server.get('/metrics', { 'X-API-Key': key })).text);

  assert.equal(valueOf(samples, 'estate_nodes'), 2);
  assert.equal(valueOf(samples, 'estate_node_stale_after_seconds'), 900);
  const web = valueOf(samples, 'estate_node_last_seen_seconds', { node: 'web-1' }) as number;
  const db = valueOf(samples, 'estate_node_last_seen_seconds', { node: 'db-1' }) as number;
  assert.ok(web >= 30 && web < 30 + 60, `web-1 last seen ${web} s ago`);
  assert.ok(db >= 7200 && db < 7200 + 60, `db-1 last seen ${db} s ago`);
  assert.equal(valueOf(samples, 'estate_node_stale', { node: 'web-1' }), 0);
  assert.equal(valueOf(samples, 'estate_node_stale', { node: 'db-1' }), 1);
  for (const [node, status] of [['web-1', 'degraded'], ['db-1', 'healthy']] as const) {
    for (const s of ['healthy', 'degraded', 'unhealthy', 'unknown']) {
      assert.equal(valueOf(samples, 'estate_node_pulse_status', { node, status: s }), s === status ? 1 : 0, `${node} ${s}`);
    }
  }
  // The newest pulse of the estate is the one without a node (this node's).
  assert.equal(valueOf(samples, 'estate_pulse_status', { status: 'unhealthy' }), 1);
  assert.equal(valueOf(samples, 'estate_pulse_status', { status: 'degraded' }), 0);
  // Only the newest sample's file systems, as df shows them: used / (used + free).
  assert.equal(valueOf(samples, 'estate_disk_used_ratio', { node: 'web-1', mount: '/' }), 300 / 900);
  assert.equal(valueOf(samples, 'estate_disk_used_ratio', { node: 'web-1', mount: '/data' }), 0.75);
  assert.equal(valueOf(samples, 'estate_disk_used_ratio', { node: 'db-1', mount: '/' }), 0.1);
  assert.equal(samples.filter((s) => s.name === 'estate_disk_used_ratio').length, 3);

  // Builds of the last 7 days by status; the older one is out of the window.
  assert.equal(valueOf(samples, 'estate_builds_last_7d', { status: 'success' }), 1);
  assert.equal(valueOf(samples, 'estate_builds_last_7d', { status: 'failure' }), 2);
  assert.equal(valueOf(samples, 'estate_builds_last_7d', { status: 'cancelled' }), 0);
  // Each board's newest completion.
  assert.equal(samples.filter((s) => s.name === 'estate_board_last_completion_seconds').length, 0, 'no completion yet');
  for (const board of ['ops', 'garden']) {
    const r = await runEstate(['work', 'complete', '--board', board, '--task-id', `t-${board}`, '--assignee', 'cron', '--title', 't', '--data-dir', dir]);
    assert.equal(r.code, 0, r.stderr);
  }

  // A node that appears is in the next scrape.
  await writeFile(path.join(dir, 'trends.jsonl'), line({ ts: ago(1), node: 'cache-1', cpu_pct: 1 }), { flag: 'a' });
  const next = parseExposition((await server.get('/metrics', { 'X-API-Key': key })).text);
  assert.equal(valueOf(next, 'estate_nodes'), 3);
  assert.equal(valueOf(next, 'estate_node_stale', { node: 'cache-1' }), 0);
  for (const board of ['ops', 'garden']) {
    const age = valueOf(next, 'estate_board_last_completion_seconds', { board }) as number;
    assert.ok(age >= 0 && age < 60, `${board}: ${age}`);
  }
});

test('/metrics answers OpenMetrics when Accept ranks it first, as Prometheus asks, and the text format otherwise', async (t) => {
  const dir = await estateOfTwoNodes(t);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const prometheusAccept = 'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';
  const om = await server.get('/metrics', { 'X-API-Key': key, Accept: prometheusAccept });
  assert.equal(om.status, 200);
  assert.equal(om.headers.get('content-type'), 'application/openmetrics-text; version=1.0.0; charset=utf-8');
  assert.ok(om.text.endsWith('# EOF\n'), 'an OpenMetrics exposition ends with # EOF');
  assert.match(om.text, /^# TYPE estate_http_requests counter$/m);
  for (const accept of ['text/plain;version=0.0.4', 'text/plain;q=1,application/openmetrics-text;q=0.5', '*/*', 'application/json']) {
    const text = await server.get('/metrics', { 'X-API-Key': key, Accept: accept });
    assert.equal(text.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8', accept);
    assert.ok(!text.text.includes('# EOF'), accept);
  }
});
