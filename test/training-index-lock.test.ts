import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdir, readFile, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { listRuns } from '../src/core/training.ts';
import { changeUserRuns, type IndexedUser } from '../src/core/training-index.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { waitUntil } from './helpers/wait-until.ts';

// A change of the training index that lost its lock while paused (a holder
// in another container, paused past the stale time: SIGSTOP, a VM pause, and
// a waiter there broke its lock) writes nothing when it resumes, neither a
// user index nor a run file, nor removes one, and what the successor wrote
// stays. As in file-lock.test.ts, the break is made by hand as that waiter
// makes it (a holder in this process is never broken while it runs).

const PAUSED = { heartbeatMs: 600_000 };

const runsDir = (dir: string) => path.join(dir, 'training', 'runs');

function newRunId(): string {
  return `run_${randomBytes(8).toString('hex')}`;
}

function runText(runId: string, userId: string): string {
  const at = new Date().toISOString();
  return `${JSON.stringify({ run_id: runId, user_id: userId, status: 'queued', name: null, model: null, dataset: null, params: {}, created_at: at, updated_at: at }, null, 2)}\n`;
}

/** A run of `userId` made through the index, as createRun makes one; returns its id. */
async function addRun(dir: string, userId: string, options = {}): Promise<string> {
  const runId = newRunId();
  await changeUserRuns(
    dir,
    userId,
    async (user) => {
      await user.save([...user.runIds, runId]);
      await user.writeRun(runId, runText(runId, userId));
    },
    options,
  );
  return runId;
}

async function listedIds(dir: string, userId: string): Promise<string[]> {
  return (await listRuns(dir, userId)).map((r) => r.run_id).sort();
}

async function userIndexes(dir: string): Promise<unknown[]> {
  const folder = path.join(dir, 'training', 'users');
  return Promise.all((await readdir(folder)).sort().map(async (name) => JSON.parse(await readFile(path.join(folder, name), 'utf8')) as unknown));
}

const cases: { name: string; write: (user: IndexedUser, dir: string, existing: string) => Promise<unknown> }[] = [
  { name: 'its user index', write: (user) => user.save([newRunId()]) },
  { name: 'a run file', write: (user) => user.writeRun(newRunId(), runText(newRunId(), 'alice')) },
  { name: 'the removal of a run file', write: (user, _dir, existing) => user.removeRun(existing) },
];

for (const c of cases) {
  test(`a change paused past the stale time writes nothing when it resumes: ${c.name}`, { timeout: 30_000 }, async (t) => {
    const dir = await tempDataDir(t);
    const existing = await addRun(dir, 'alice');
    let resume!: () => void;
    const resumed = new Promise<void>((r) => (resume = r));
    let paused = false;
    const first = changeUserRuns(
      dir,
      'alice',
      async (user) => {
        paused = true;
        await resumed;
        return c.write(user, dir, existing);
      },
      PAUSED,
    );
    await waitUntil('the first change holds the lock', () => paused);
    const lock = path.join(dir, 'training', 'index.json.lock');
    await rename(lock, `${lock}.broken`);
    await unlink(`${lock}.broken`);
    const successors = await addRun(dir, 'alice');
    const filesBefore = (await readdir(runsDir(dir))).sort();
    const indexesBefore = await userIndexes(dir);
    const manifestBefore = await readFile(path.join(dir, 'training', 'index.json'), 'utf8');

    resume();
    await assert.rejects(first, (err: Error & { code?: string }) => err.code === 'unavailable' && /lost its inter-process lock/.test(err.message));
    assert.deepEqual((await readdir(runsDir(dir))).sort(), filesBefore, 'no run file written or removed');
    assert.deepEqual(await userIndexes(dir), indexesBefore, "the successor's index stays");
    assert.equal(await readFile(path.join(dir, 'training', 'index.json'), 'utf8'), manifestBefore);
    assert.deepEqual(await listedIds(dir, 'alice'), [existing, successors].sort(), "the successor's run is listed");
    assert.deepEqual((await readdir(path.join(dir, 'training'))).filter((n) => /\.(lock|break|aside)$/.test(n)), []);
  });
}

test('a change that kept its lock writes and lists as before', async (t) => {
  const dir = await tempDataDir(t);
  const a = await addRun(dir, 'alice');
  const b = await addRun(dir, 'alice');
  const removed = await changeUserRuns(dir, 'alice', async (user) => {
    const gone = await user.removeRun(a);
    await user.save(user.runIds.filter((id) => id !== a));
    return gone;
  });
  assert.equal(removed, true);
  assert.equal(await changeUserRuns(dir, 'alice', (user) => user.removeRun(a)), false, 'a run already gone');
  assert.deepEqual(await listedIds(dir, 'alice'), [b]);
});
