import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate, startEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';

// `estate work feed --follow` keeps one order, oldest at the top and new
// completions appended below; with --json it prints NDJSON only.

async function dirWithThree(t: Parameters<typeof tempDataDir>[0]): Promise<string> {
  const dir = await tempDataDir(t);
  const start = Date.parse('2026-11-01T00:00:00Z');
  const lines = [0, 1, 2].map((i) =>
    JSON.stringify({ id: `wc_${String(i).padStart(16, '0')}`, task_id: `T-${i}`, board: 'ops', assignee: 'builder', title: `Task ${i}`, completed_at: new Date(start + i * 60_000).toISOString() }),
  );
  await writeFile(path.join(dir, 'work', 'completions.jsonl'), lines.map((l) => `${l}\n`).join(''));
  return dir;
}

const NEW = ['work', 'complete', '--task-id', 'T-new', '--board', 'ops', '--assignee', 'cron', '--title', 'Task new'];

test('work feed --follow, locally: the feed oldest first, then the new completion below it', async (t) => {
  const dir = await dirWithThree(t);
  const follow = startEstate(t, ['work', 'feed', '--follow', '--data-dir', dir]);
  await follow.waitForStdout('the feed', (out) => out.split('\n').length === 4);
  const added = await runEstate([...NEW, '--data-dir', dir]);
  assert.equal(added.code, 0, added.stderr);
  await follow.waitForStdout('the new completion', (out) => out.includes('T-new'));
  const stopped = await follow.stop('SIGINT');
  assert.equal(stopped.code, 0, stopped.stderr);
  const lines = stopped.stdout.trimEnd().split('\n');
  assert.deepEqual(
    lines.map((l) => /ops\/(T-\S+)/.exec(l)?.[1]),
    ['T-0', 'T-1', 'T-2', 'T-new'],
    stopped.stdout,
  );
  assert.match(lines[0] as string, /^2026-11-01T00:00:00\.000Z {2}ops\/T-0 {2}builder {2}Task 0$/);
});

for (const mode of ['local', 'remote'] as const) {
  test(`work feed --follow --json, ${mode}: NDJSON only, oldest first, the new completion last`, async (t) => {
    const dir = await dirWithThree(t);
    const key = await newKey(dir, 'cron');
    const server = mode === 'remote' ? await startServer(t, dir) : undefined;
    const where = server ? ['--url', server.url, '--api-key', key] : ['--data-dir', dir];
    const follow = startEstate(t, ['work', 'feed', '--follow', '--json', ...where]);
    await follow.waitForStdout('the feed', (out) => out.split('\n').length === 4);
    const added = await runEstate([...NEW, ...where]);
    assert.equal(added.code, 0, added.stderr);
    await follow.waitForStdout('the new completion', (out) => out.includes('T-new'));
    const stopped = await follow.stop();
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.ok(stopped.stdout.endsWith('\n'));
    const records = stopped.stdout.trimEnd().split('\n').map((line) => JSON.parse(line));
    assert.deepEqual(
      records.map((r) => r.task_id),
      ['T-0', 'T-1', 'T-2', 'T-new'],
    );
    assert.ok(records.every((r) => typeof r.id === 'string' && typeof r.completed_at === 'string'));
  });
}
