import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';
import { waitUntil } from './helpers/wait-until.ts';

// /estate/agents and /summary count every completion and entry of the feed,
// exactly, however many there are (they once counted only the newest 5,000
// or 1,000), and stay exact as another process appends to the logs.

const NOW = new Date('2026-11-26T12:00:00.000Z');
const HOUR = 3_600_000;

const completion = (i: number, assignee: string, hoursAgo: number, board: string) =>
  JSON.stringify({ id: `wc_${i.toString(16).padStart(16, '0')}`, task_id: `T-${i}`, board, assignee, title: `Task ${i}`, completed_at: new Date(NOW.getTime() - hoursAgo * HOUR).toISOString() });

test('the aggregates count every record past any window, and follow appends by another process', async (t) => {
  const dir = await tempDataDir(t);
  const lines: string[] = [];
  let i = 0;
  // bulk: 6,000 completions older than a week, then 5,200 within the last day; scout: 300 within the week.
  for (let n = 0; n < 6000; n++) lines.push(completion(i++, 'bulk', 200 + n / 100, 'archive'));
  for (let n = 0; n < 300; n++) lines.push(completion(i++, 'scout', 100, n % 2 ? 'ops' : 'infra'));
  for (let n = 0; n < 5200; n++) lines.push(completion(i++, 'bulk', 20 - n / 1000, 'ops'));
  lines.push('{"torn":');
  await writeFile(path.join(dir, 'work', 'completions.jsonl'), `${lines.join('\n')}\n`);
  const entries = Array.from({ length: 1500 }, (_, n) =>
    JSON.stringify({ entry_id: `pub_${n.toString(16).padStart(16, '0')}`, title: `Piece ${n}`, slug: `p-${n}`, content_type: 'essay', target_site: 'garden', registered_at: new Date(NOW.getTime() - (n < 200 ? 40 : 1) * 24 * HOUR).toISOString() }),
  );
  await writeFile(path.join(dir, 'publishing', 'entries.jsonl'), `${entries.join('\n')}\n`);
  const key = await newKey(dir);
  const server = await startServer(t, dir, { now: () => NOW });
  const headers = { 'X-API-Key': key };

  const agents = await server.get('/estate/agents');
  assert.equal(agents.status, 200, agents.text);
  assert.deepEqual(
    agents.json.items.map((a: { name: string; completions: number; completions_24h: number; completions_7d: number; boards: string[] }) => [a.name, a.completions, a.completions_24h, a.completions_7d, a.boards]),
    [
      ['bulk', 11_200, 5200, 5200, ['archive', 'ops']],
      ['scout', 300, 0, 300, ['infra', 'ops']],
    ],
  );
  assert.deepEqual(agents.json.window, { records: 11_500, since: new Date(NOW.getTime() - 200 * HOUR - 59.99 * HOUR).toISOString() });
  assert.equal(agents.json.skipped_lines, 1);
  assert.equal(agents.json.items[0].last_task.task_id, `T-${i - 1}`);

  const summary = await server.get('/summary', headers);
  assert.equal(summary.status, 200, summary.text);
  assert.equal(summary.json.work.last_24h, 5200);
  assert.equal(summary.json.publishing.last_30d, 1300);

  // Another process appends: the next answers count it.
  const more = Array.from({ length: 7 }, (_, n) => completion(i++, 'late', 1, 'ops')).join('\n');
  const child = spawnSync(process.execPath, ['-e', `require('node:fs').appendFileSync(${JSON.stringify(path.join(dir, 'work', 'completions.jsonl'))}, ${JSON.stringify(`${more}\n`)})`]);
  assert.equal(child.status, 0, String(child.stderr));
  await waitUntil('the appended completions counted', async () => (await server.get('/summary', headers)).json.work.last_24h === 5207);
  const after = await server.get('/estate/agents');
  assert.deepEqual(after.json.items[0].name, 'late');
  assert.equal(after.json.items[0].completions_24h, 7);
  assert.equal(after.json.window.records, 11_507);
});
