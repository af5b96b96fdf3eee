import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { startServer } from './helpers/server.ts';

const NOW = new Date('2026-11-22T00:00:00.000Z');
const HOUR = 3_600_000;

function completion(assignee: string, hoursAgo: number, board: string, task: string) {
  return { id: `wc_${task}`, task_id: task, board, assignee, title: `Task ${task}`, completed_at: new Date(NOW.getTime() - hoursAgo * HOUR).toISOString() };
}

async function agentsDir(t: Parameters<typeof tempDataDir>[0]) {
  const dir = await tempDataDir(t);
  const records = [
    completion('ferry', 300, 'ops', 'T-1'),
    completion('scribe', 100, 'garden', 'T-2'),
    completion('ferry', 30, 'infra', 'T-3'),
    completion('scribe', 2, 'ops', 'T-4'),
    completion('ferry', 1, 'ops', 'T-5'),
  ];
  const lines = records.map((r) => JSON.stringify(r));
  lines.splice(2, 0, '{"torn":');
  lines.push(JSON.stringify({ id: 'x', title: 'no assignee', completed_at: NOW.toISOString() }));
  await writeFile(path.join(dir, 'work', 'completions.jsonl'), `${lines.join('\n')}\n`);
  await writeFile(path.join(dir, 'health-pulse.jsonl'), `${JSON.stringify({ ts: NOW.toISOString(), status: 'unhealthy' })}\n`);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ node_name: 'hub' }));
  return dir;
}

test('/estate/agents is public: agents from the completion feed with counts and boards, and the live runtime', async (t) => {
  const dir = await agentsDir(t);
  const server = await startServer(t, dir, { now: () => NOW });
  const r = await server.get('/estate/agents');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json.items, [
    { name: 'ferry', last_activity: '2026-11-21T23:00:00.000Z', last_task: { task_id: 'T-5', title: 'Task T-5', board: 'ops' }, completions: 3, completions_24h: 1, completions_7d: 2, boards: ['infra', 'ops'] },
    { name: 'scribe', last_activity: '2026-11-21T22:00:00.000Z', last_task: { task_id: 'T-4', title: 'Task T-4', board: 'ops' }, completions: 2, completions_24h: 1, completions_7d: 2, boards: ['garden', 'ops'] },
  ]);
  // The line without a task_id or board is no completion: skipped like the torn one, as /work/feed skips it.
  assert.deepEqual(r.json.window, { records: 5, since: '2026-11-09T12:00:00.000Z' });
  assert.equal(r.json.skipped_lines, 2);
  assert.equal(r.json.error, null);
  const rt = r.json.runtime;
  assert.equal(typeof rt.hostname, 'string');
  assert.equal(rt.load_avg.length, 3);
  assert.ok(rt.memory.total_bytes > 0 && rt.memory.used_pct >= 0 && rt.memory.used_pct <= 100);
  assert.ok(rt.cpus >= 1 && rt.host_uptime_s > 0);
});

test('/estate/status is public: node, status from the pulse, uptime and last activity', async (t) => {
  const dir = await agentsDir(t);
  let now = NOW;
  const server = await startServer(t, dir, { now: () => now });
  now = new Date(server.ctx.startedAt.getTime() + 90_000);
  const r = await server.get('/estate/status');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.node, 'hub');
  assert.equal(r.json.status, 'degraded');
  assert.equal(r.json.pulse, 'unhealthy');
  assert.equal(r.json.uptime_s, 90);
  assert.equal(r.json.last_activity, '2026-11-21T23:00:00.000Z', 'the newest completion (the last line is no completion)');
  assert.deepEqual(r.json.errors, []);
  assert.equal(typeof r.json.runtime.hostname, 'string');
});

test('an empty estate has no agents and an ok status; estate agents and status print the same bodies', async (t) => {
  const dir = await tempDataDir(t);
  const server = await startServer(t, dir);
  const agents = await server.get('/estate/agents');
  assert.deepEqual([agents.status, agents.json.items, agents.json.window.since], [200, [], null]);
  const status = await server.get('/estate/status');
  assert.deepEqual([status.json.status, status.json.pulse, status.json.last_activity], ['ok', 'unknown', null]);
  const full = await agentsDir(t);
  const cli = await runEstate(['agents', '--json', '--data-dir', full]);
  assert.equal(cli.code, 0, cli.stderr);
  assert.deepEqual(cli.json.items.map((a: { name: string }) => a.name), ['ferry', 'scribe']);
  const table = await runEstate(['status', '-o', 'table', '--data-dir', full]);
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /status +│ degraded/);
});
