import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { tempDataDir } from './helpers/data-dir.ts';
import { HAS_PROMTOOL, parseExposition, promtoolCheck, valueOf, type Sample } from './helpers/exposition.ts';
import { refusedUrl, startAnswering } from './helpers/fake-upstreams.ts';
import { skipWithout } from './helpers/required-tool.ts';
import { sampleOf } from './helpers/samples.ts';
import { newKey, startServer } from './helpers/server.ts';

// GET /metrics: what core observes (src/core/observe.ts) — the store's
// writes (latency and records per write), the data dir's durable appends
// and lock waits, and the external sources' latency and outcomes — counted
// through the real server as real writes and real upstreams happen.

const count = (samples: readonly Sample[], name: string, labels: Record<string, string>) => valueOf(samples, name, labels) ?? 0;

test('/metrics: store writes, log appends and lock waits grow with completions and ingest batches; external sources by outcome; labels bounded; promtool accepts it', async (t) => {
  const dir = await tempDataDir(t);
  const [good, bad, refused] = await Promise.all([startAnswering(t, 200), startAnswering(t, 502), refusedUrl()]);
  await writeFile(
    path.join(dir, 'estate.config.json'),
    JSON.stringify({
      forge: { url: refused, timeout_ms: 30_000 },
      providers: [
        { name: 'up', url: `${good.url}/api/tags`, timeout_ms: 30_000 },
        { name: 'broken', url: `${bad.url}/api/tags`, timeout_ms: 30_000 },
      ],
      providers_cache_s: 0,
      stats: { command: [process.execPath, '-e', 'process.stdout.write(JSON.stringify({ visits: 1 }))'], timeout_ms: 30_000, cache_s: 0 },
    }),
  );
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const auth = { 'X-API-Key': key };
  const scrape = async () => {
    const r = await server.get('/metrics', auth);
    assert.equal(r.status, 200, r.text);
    return { text: r.text, samples: parseExposition(r.text) };
  };

  const before = (await scrape()).samples;
  for (const name of ['estate_external_requests_total']) {
    assert.equal(count(before, name, { source: 'providers', outcome: 'error' }), 0, 'the outcomes are there from the start, at 0');
  }

  for (let i = 0; i < 3; i++) {
    const r = await server.request('POST', '/work/complete', { headers: auth, body: { task_id: `t-${i}`, board: 'ops', assignee: 'cron', title: 'nightly' } });
    assert.equal(r.status, 201, r.text);
  }
  const batch = [sampleOf('web-1', new Date(Date.now() - 2000)), sampleOf('web-1', new Date(Date.now() - 1000))];
  const ingested = await server.request('POST', '/ingest', { headers: auth, body: { samples: batch } });
  assert.equal(ingested.status, 200, ingested.text);
  assert.equal((await server.get('/providers', auth)).status, 200);
  assert.equal((await server.get('/forgejo-proxy/repos', auth)).status, 502);
  const stats = await server.get('/stats', auth);
  assert.equal(stats.status, 200, stats.text);

  const { text, samples } = await scrape();
  const grew = (name: string, labels: Record<string, string>) => count(samples, name, labels) - count(before, name, labels);
  assert.equal(grew('estate_store_write_duration_seconds_count', { kind: 'completions' }), 3);
  assert.equal(grew('estate_store_write_records_sum', { kind: 'completions' }), 3);
  assert.equal(grew('estate_store_write_duration_seconds_count', { kind: 'ingest' }), 1, 'one ingest batch');
  assert.equal(grew('estate_store_write_records_sum', { kind: 'ingest' }), 2, 'of two samples');
  assert.equal(grew('estate_store_write_failures_total', { kind: 'completions' }), 0);
  // The three completions reached the log in one to three durable appends, holding three records in all.
  const appends = grew('estate_log_append_records_count', { log: 'completions.jsonl' });
  assert.ok(appends >= 1 && appends <= 3, `${appends} appends`);
  assert.equal(grew('estate_log_append_records_sum', { log: 'completions.jsonl' }), 3);
  assert.equal(grew('estate_log_append_duration_seconds_count', { log: 'completions.jsonl' }), appends);
  assert.equal(grew('estate_log_append_records_sum', { log: 'trends.jsonl' }), 2, 'the batch\'s trend points');
  // Each append waited for the log's lock first.
  assert.ok(grew('estate_lock_wait_seconds_count', { lock: 'completions.jsonl' }) >= appends);
  assert.ok(grew('estate_lock_wait_seconds_count', { lock: 'trends.jsonl' }) >= 1);
  // The external sources: one provider answered, one answered 502; the forge refused the connection.
  assert.equal(grew('estate_external_requests_total', { source: 'providers', outcome: 'ok' }), 1);
  assert.equal(grew('estate_external_requests_total', { source: 'providers', outcome: 'error' }), 1);
  assert.equal(grew('estate_external_request_duration_seconds_count', { source: 'providers' }), 2);
  assert.ok(grew('estate_external_requests_total', { source: 'forge', outcome: 'error' }) >= 1);
  assert.equal(grew('estate_external_requests_total', { source: 'forge', outcome: 'timeout' }), 0);
  assert.equal(grew('estate_external_requests_total', { source: 'stats', outcome: 'ok' }), 1);
  assert.equal(grew('estate_external_request_duration_seconds_count', { source: 'stats' }), 1);

  // Bounded labels: no URL, port, path or task id.
  for (const leak of [good.url, bad.url, refused, 't-0', dir]) assert.ok(!text.includes(leak), `no ${leak} in the exposition`);
  const locks = new Set(samples.filter((s) => s.name === 'estate_lock_wait_seconds_count').map((s) => s.labels.lock));
  for (const lock of locks) assert.match(lock ?? '', /^(other|[a-z-]+\.jsonl?|[a-z-]+)$/, `lock label ${lock}`);

  if (skipWithout(t, HAS_PROMTOOL ? false : 'promtool is not installed (apt-get install prometheus)')) return;
  const checked = promtoolCheck(text);
  assert.equal(checked.status, 0, checked.output);
});
