import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EstateReadings } from '../src/core/metrics/estate-readings.ts';
import { createServerMetrics } from '../src/server/metrics/server-metrics.ts';
import { parseExposition, valueOf } from './helpers/exposition.ts';

// A scrape whose estate readings fail or hang still answers: the request
// and process metrics as ever, the estate gauges as last read, and
// estate_readings_ok saying the reading was not fresh.

const reading = (nodes: number): EstateReadings => ({
  nodes: Array.from({ length: nodes }, (_, i) => ({ node: `n${i}`, lastSeenAgoS: 5, stale: false, pulseStatus: 'healthy', disks: [] })) as unknown as EstateReadings['nodes'],
  pulseStatus: 'healthy',
  staleAfterS: 900,
  boards: [],
  builds: [],
  schedules: [],
});

test('a reading that fails or hangs leaves the last good estate gauges, says so in estate_readings_ok, and the scrape answers', async (t) => {
  const answers: (() => Promise<EstateReadings>)[] = [async () => reading(3), async () => Promise.reject(new Error('store down')), () => new Promise<EstateReadings>(() => {})];
  let calls = 0;
  const metrics = createServerMetrics({ readings: () => (answers[calls++] as () => Promise<EstateReadings>)(), version: 'test', readingsMs: 200 });
  t.after(() => metrics.close());
  const scrape = async () => parseExposition((await metrics.render(undefined)).text);

  let samples = await scrape();
  assert.deepEqual([valueOf(samples, 'estate_readings_ok'), valueOf(samples, 'estate_nodes')], [1, 3]);
  for (const what of ['failed', 'hung']) {
    samples = await scrape();
    assert.deepEqual([valueOf(samples, 'estate_readings_ok'), valueOf(samples, 'estate_nodes')], [0, 3], what);
    assert.ok(samples.some((s) => s.name === 'process_cpu_seconds_total'), `${what}: the process metrics answer`);
  }
  // Scrapes while the hung reading is still under way wait for it (within the bound), never starting a second beside it.
  await scrape();
  await scrape();
  assert.equal(calls, 3);
  // After three scrapes in vain it is let go: the next scrape reads afresh, and the gauges follow again.
  answers.push(async () => reading(5));
  samples = await scrape();
  assert.equal(calls, 4);
  assert.deepEqual([valueOf(samples, 'estate_readings_ok'), valueOf(samples, 'estate_nodes')], [1, 5]);
});
