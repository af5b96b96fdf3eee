import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import type { z } from 'zod';
import { diskLatest } from '../src/api/operations/disk.ts';
import { pulseList } from '../src/api/operations/pulse.ts';
import { trendsLatest } from '../src/api/operations/trends.ts';
import { acceptOf, SERIES_RECORDS, type SeriesLog } from '../src/core/series-records.ts';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';

// A line of a series log that is a JSON object but not a record of its log
// (a documented field of the wrong type, a required one missing) is skipped
// and counted like a corrupt line: every reader answers 200 with the good
// records, never a 500, never the bad record shown as if it were one.

const HOUR = 3_600_000;
const at = (hoursAgo: number) => new Date(Date.now() - hoursAgo * HOUR).toISOString();

const disk = {
  root: { ts: at(5), mount: '/', total_bytes: 100, used_bytes: 10, free_bytes: 90 },
  srv: { ts: at(4), mount: '/srv', total_bytes: 200, used_bytes: 50, free_bytes: 150, host: 'hub' },
  bad: [
    `{"ts":"${at(3)}","mount":5,"total_bytes":100,"used_bytes":11,"free_bytes":89}`,
    `{"ts":"${at(3)}","mount":"/","total_bytes":100,"used_bytes":"lots","free_bytes":89}`,
    `{"ts":"${at(2)}","mount":"/","total_bytes":1e999,"used_bytes":12,"free_bytes":88}`,
    `{"ts":"${at(2)}","mount":"/srv","total_bytes":200,"used_bytes":60,"free_bytes":null}`,
    `{"ts":"${at(1)}","mount":"/srv","total_bytes":[200],"used_bytes":70,"free_bytes":130}`,
  ],
};

const pulse = {
  healthy: { ts: at(5), status: 'healthy' },
  degraded: { ts: at(4), status: 'degraded', checks: { disk: 'low' } },
  bad: [
    `{"ts":"${at(3)}","status":7}`,
    `{"ts":"${at(3)}","status":"unhealthy","checks":"ok"}`,
    `{"ts":"${at(2)}","status":null}`,
    `{"ts":"${at(1)}","status":"unhealthy","checks":["disk"]}`,
  ],
};

const builds = {
  good: [
    { ts: at(6), project: 'api', status: 'success', duration_s: 60 },
    { ts: at(5), project: 'web', status: 'failure', ref: 'main', commit: 'abc123' },
  ],
  bad: [
    `{"ts":"${at(4)}","project":5,"status":"success"}`,
    `{"ts":"${at(4)}","project":"api","status":7}`,
    `{"ts":"${at(3)}","project":"api"}`,
    `{"ts":"${at(3)}","status":"success"}`,
    `{"ts":"${at(2)}","project":"api","status":"success","duration_s":"long"}`,
    `{"ts":"${at(1)}","project":"web","status":"failure","commit":{"sha":"abc"}}`,
  ],
};

const trends = {
  good: [{ ts: at(2), cpu_pct: 20 }, { ts: 5, cpu_pct: 'n/a', nested: [1] }],
  bad: ['{"ts":"torn', '[1,2]'],
};

const line = (r: object | string) => `${typeof r === 'string' ? r : JSON.stringify(r)}\n`;

async function writeLogs(dir: string): Promise<void> {
  await writeFile(path.join(dir, 'disk.jsonl'), [disk.root, disk.srv, ...disk.bad].map(line).join(''));
  await writeFile(path.join(dir, 'health-pulse.jsonl'), [pulse.healthy, pulse.degraded, ...pulse.bad].map(line).join(''));
  await writeFile(path.join(dir, 'builds.jsonl'), [...builds.good, ...builds.bad].map(line).join(''));
  await writeFile(path.join(dir, 'trends.jsonl'), [trends.good[0] as object, trends.bad[0] as string, trends.good[1] as object, trends.bad[1] as string].map(line).join(''));
}

/** What every reader must answer for the logs of writeLogs, HTTP and CLI alike. */
const expected = {
  '/disk': { items: [disk.srv, disk.root], count: 2, limit: 100, skipped_lines: disk.bad.length },
  '/disk?mount=%2F': { items: [disk.root], count: 1, limit: 100, skipped_lines: disk.bad.length },
  '/disk/latest': disk.srv,
  '/disk/latest?mount=%2F': disk.root,
  '/health/pulse': { items: [pulse.degraded, pulse.healthy], count: 2, limit: 100, skipped_lines: pulse.bad.length },
  '/health/pulse/status': 'degraded',
  '/trends': { items: [...trends.good].reverse(), count: 2, limit: 100, skipped_lines: trends.bad.length },
  '/trends/latest': trends.good[1],
};

function checkBuilds(digest: any): void {
  assert.deepEqual(
    { total: digest.total, success: digest.success, failure: digest.failure, skipped_lines: digest.skipped_lines },
    { total: 2, success: 1, failure: 1, skipped_lines: builds.bad.length },
  );
  assert.deepEqual(
    digest.by_project.map((p: any) => [p.project, p.total, p.last_status, p.avg_duration_s]),
    [['api', 1, 'success', 60], ['web', 1, 'failure', null]],
  );
}

test('a series line of the wrong shape is skipped and counted by every reader over HTTP, never a 500', async (t) => {
  const dir = await tempDataDir(t);
  await writeLogs(dir);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const h = { 'X-API-Key': key };
  for (const [route, answer] of Object.entries(expected)) {
    await t.test(route, async () => {
      const r = await server.get(route, h);
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json, answer);
    });
  }
  for (const route of ['/builds', '/builds/recent']) {
    await t.test(route, async () => {
      const r = await server.get(route, h);
      assert.equal(r.status, 200, r.text);
      checkBuilds(r.json);
    });
  }
  await t.test('/health, /estate/status, /api/garden, /summary: the newest good pulse entry', async () => {
    const [health, status, garden, summary] = await Promise.all([server.get('/health'), server.get('/estate/status', h), server.get('/api/garden', h), server.get('/summary', h)]);
    for (const r of [health, status, garden, summary]) assert.equal(r.status, 200, r.text);
    assert.equal(health.json.pulse, 'degraded');
    assert.equal(status.json.pulse, 'degraded');
    assert.deepEqual([garden.json.pulse.status, garden.json.pulse.ts], ['degraded', pulse.degraded.ts]);
    assert.deepEqual(summary.json.pulse, { status: 'degraded', ts: pulse.degraded.ts, error: null });
    assert.deepEqual(summary.json.trends.latest, trends.good[1]);
    assert.deepEqual(summary.json.disk.mounts, [
      { mount: '/', used_pct: 10, free_bytes: 90, ts: disk.root.ts },
      { mount: '/srv', used_pct: 25, free_bytes: 150, ts: disk.srv.ts },
    ]);
    assert.deepEqual([summary.json.builds.total, summary.json.builds.success, summary.json.builds.failure], [2, 1, 1]);
  });
  await t.test('/status page: the newest good pulse entry', async () => {
    const r = await server.get('/status');
    assert.equal(r.status, 200);
    const section = r.text.slice(r.text.indexOf('Latest pulse'), r.text.indexOf('Recent activity'));
    assert.match(section, /<dd class="degraded">degraded<\/dd>/);
    assert.match(section, /<dt>disk<\/dt><dd>low<\/dd>/);
  });
});

test('a series line of the wrong shape is skipped and counted by the CLI (local mode)', async (t) => {
  const dir = await tempDataDir(t);
  await writeLogs(dir);
  const run = (args: string[]) => runEstate([...args, '--data-dir', dir]);
  const commands: Record<keyof typeof expected, string[]> = {
    '/disk': ['disk', '--json'],
    '/disk?mount=%2F': ['disk', '--mount', '/', '--json'],
    '/disk/latest': ['disk', 'latest', '--json'],
    '/disk/latest?mount=%2F': ['disk', 'latest', '--mount', '/', '--json'],
    '/health/pulse': ['pulse', '--json'],
    '/health/pulse/status': ['pulse', 'status', '--json'],
    '/trends': ['trends', '--json'],
    '/trends/latest': ['trends', 'latest', '--json'],
  };
  const results = await Promise.all(Object.values(commands).map(run));
  for (const [i, [route, args]] of Object.entries(commands).entries()) {
    const r = results[i] as Awaited<ReturnType<typeof runEstate>>;
    assert.equal(r.stderr, '', `estate ${args.join(' ')}`);
    assert.equal(r.code, route === '/health/pulse/status' ? 1 : 0, `estate ${args.join(' ')}: ${r.stderr}`);
    assert.deepEqual(r.json, expected[route as keyof typeof expected], `estate ${args.join(' ')}`);
  }
  const [digest, summary, status] = await Promise.all([run(['builds', '--json']), run(['summary', '--json']), run(['status', '--json'])]);
  assert.equal(digest.code, 0, digest.stderr);
  checkBuilds(digest.json);
  assert.equal(summary.code, 0, summary.stderr);
  assert.equal(summary.json.pulse.status, 'degraded');
  assert.equal(summary.json.disk.mounts.length, 2);
  assert.equal(status.code, 0, status.stderr);
  assert.equal(status.json.pulse, 'degraded');
});

// The readers' accept and the API's output schema of the same records must
// agree: a record the reader accepts is answered (never a 500), one the
// output schema refuses is skipped. Samples: each typed field given values
// of every JSON type (and Infinity, what JSON.parse makes of 1e999), then
// random records over the same fields.

const schemas: Partial<Record<SeriesLog, z.ZodType>> = {
  trends: trendsLatest.output,
  disk: diskLatest.output,
  pulse: (pulseList.output as unknown as z.ZodObject<{ items: z.ZodArray<z.ZodType> }>).shape.items.element,
};

const VALUES: unknown[] = ['', '/srv', 'healthy', 0, -1, 1.5, 1e300, Infinity, null, true, false, [], ['a'], {}, { disk: 'ok' }];
const FIELDS = [...new Set(Object.values(SERIES_RECORDS).flatMap((s) => [...Object.keys(s.required), ...Object.keys(s.optional)])), 'ts', 'extra'];

test('each series log\'s accept and its output schema agree on every sample', async (t) => {
  for (const [log, schema] of Object.entries(schemas) as [SeriesLog, z.ZodType][]) {
    await t.test(log, () => {
      const accept = acceptOf(log);
      const samples: Record<string, unknown>[] = [{}];
      for (const field of FIELDS) for (const value of VALUES) samples.push({ ts: '2026-11-21T00:00:00Z', [field]: value });
      const verdicts = samples.map((sample) => {
        const ok = accept(sample);
        assert.equal(ok, schema.safeParse(sample).success, `${log}: ${JSON.stringify(sample)} (accepted: ${ok})`);
        return ok;
      });
      if (log !== 'trends') assert.ok(verdicts.includes(false), `${log}: some sample is refused`);
      assert.ok(verdicts.includes(true), `${log}: some sample is accepted`);
      fc.assert(
        fc.property(fc.dictionary(fc.constantFrom(...FIELDS), fc.oneof(fc.constantFrom(...VALUES), fc.jsonValue())), (sample) => {
          assert.equal(accept(sample), schema.safeParse(sample).success, JSON.stringify(sample));
        }),
        { numRuns: 500 },
      );
    });
  }
});
