import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { migrateStore } from '../src/core/store/postgres/migrate.ts';
import { VERSION } from '../src/version.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { startPostgres } from './helpers/postgres.ts';
import { startServer } from './helpers/server.ts';

// The dashboard's aggregates read what estate writes from the store it uses:
// on PostgreSQL, /estate/agents, /summary, /api/garden, /estate/status and
// /estate/logs show the completions and entries in the database, and the data
// dir's own (absent) log files play no part.

test('on the PostgreSQL store, every aggregate shows the records written through it', async (t) => {
  const pg = await startPostgres(t);
  if (!pg) return t.skip('PostgreSQL is not installed (apt-get install postgresql)');
  await migrateStore(pg.url, {}, VERSION);
  const dir = await tempDataDir(t);
  const server = await startServer(t, dir, { env: { ESTATE_STORE: pg.url } });
  const { key } = await server.ctx.store.credentials.create({ userId: 'ana' });
  const headers = { 'X-API-Key': key };

  for (const [taskId, assignee, board] of [['T-1', 'scribe', 'garden'], ['T-2', 'scribe', 'ops'], ['T-3', 'warden', 'ops']]) {
    const r = await server.request('POST', '/work/complete', { headers, body: { task_id: taskId, board, assignee, title: `task ${taskId}` } });
    assert.equal(r.status, 201, r.text);
  }
  for (const [slug, type] of [['on-pruning', 'essay'], ['first-frost', 'poem']]) {
    const r = await server.request('POST', '/publishing/register', { headers, body: { title: slug, slug, content_type: type, target_site: 'garden' } });
    assert.equal(r.status, 201, r.text);
  }
  assert.equal(existsSync(path.join(dir, 'work', 'completions.jsonl')), false, 'nothing went to the data dir');

  const agents = await server.get('/estate/agents', headers);
  assert.equal(agents.status, 200, agents.text);
  assert.deepEqual(
    agents.json.items.map((a: { name: string; completions: number; boards: string[] }) => [a.name, a.completions, a.boards]),
    [
      ['warden', 1, ['ops']],
      ['scribe', 2, ['garden', 'ops']],
    ],
  );
  assert.equal(agents.json.error, null);

  const summary = await server.get('/summary', headers);
  assert.equal(summary.status, 200, summary.text);
  assert.equal(summary.json.work.last_24h, 3);
  assert.equal(summary.json.work.latest.task_id, 'T-3');
  assert.equal(summary.json.publishing.last_30d, 2);
  assert.equal(summary.json.publishing.latest.title, 'first-frost');

  const garden = await server.get('/api/garden');
  assert.equal(garden.status, 200, garden.text);
  assert.deepEqual(garden.json.writings.items.map((p: { slug: string }) => p.slug), ['on-pruning']);
  assert.deepEqual(garden.json.forms.items.map((p: { slug: string }) => p.slug), ['first-frost']);
  assert.equal(garden.json.pulse.last_activity, summary.json.work.latest.completed_at);

  const status = await server.get('/estate/status');
  assert.equal(status.status, 200, status.text);
  assert.equal(status.json.last_activity, summary.json.work.latest.completed_at);

  const logs = await server.get('/estate/logs?limit=2');
  assert.deepEqual(logs.json.items.map((l: { message: string }) => l.message), ['warden completed ops/T-3: task T-3', 'scribe completed ops/T-2: task T-2']);
});
