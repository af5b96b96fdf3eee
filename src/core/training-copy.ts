import { opendir } from 'node:fs/promises';
import path from 'node:path';
import { EstateError } from '../errors.ts';
import { dataPath } from './data-files.ts';
import { isNotFound } from './fs-errors.ts';
import { recordDifferences } from './keyed-log.ts';
import { assertDataFolder, fileRefusal, openDataFile } from './open-data-file.ts';
import type { RestoreResult, RunPage } from './store/store.ts';
import { changeUserRuns, RUN_ID } from './training-index.ts';
import { readRunFile, trainingRunSchema, type TrainingRun } from './training.ts';

// Training runs of a data dir as a whole, for copying a store
// (copy-store.ts): every run of every user, and a run stored as it was made
// elsewhere. Run files are read and written as training.ts does: never
// through a link, atomically, under the training lock (training-index.ts).

/**
 * Every run in `training/runs/`, `pageSize` at a time, in directory order.
 * A file named as a run that is not one (corrupt, a link, another run's) is
 * counted in `skipped`; other files (an atomic write's temp file) are not runs.
 */
export async function* scanRuns(dataDir: string, pageSize: number): AsyncGenerator<RunPage> {
  const folder = dataPath(dataDir, 'trainingRuns');
  let dir;
  // A runs folder that leads out of the data dir is refused, as for every read of it.
  await assertDataFolder(folder);
  try {
    dir = await opendir(folder);
  } catch (err) {
    if (isNotFound(err)) return;
    throw err;
  }
  let page: RunPage = { runs: [], skipped: 0 };
  for await (const entry of dir) {
    const runId = entry.name.slice(0, -'.json'.length);
    if (!entry.name.endsWith('.json') || !RUN_ID.test(runId)) continue;
    const run = await readRunFile(path.join(folder, entry.name), runId);
    if (run === undefined) continue; // deleted since the folder was listed
    if (run === 'unreadable') page.skipped++;
    else page.runs.push(run);
    if (page.runs.length >= pageSize) {
      yield page;
      page = { runs: [], skipped: 0 };
    }
  }
  if (page.runs.length > 0 || page.skipped > 0) yield page;
}

/** Stores `run` as it is (TrainingRuns.restore), under the training lock; an existing run file is never replaced. */
export async function restoreRun(dataDir: string, run: TrainingRun): Promise<RestoreResult<TrainingRun | undefined>> {
  const parsed = trainingRunSchema.safeParse(run);
  if (!parsed.success) throw new EstateError('validation', `not a training run: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  const valid = parsed.data;
  const file = path.join(dataPath(dataDir, 'trainingRuns'), `${valid.run_id}.json`);
  return changeUserRuns(dataDir, valid.user_id, async (user) => {
    const stored = await readRunFile(file, valid.run_id);
    if (stored === 'unreadable') return { outcome: 'conflict', stored: undefined };
    if (stored) return { outcome: recordDifferences(stored, valid).length === 0 ? 'present' : 'conflict', stored };
    // As createRun does: the id in the user's index first, then the file.
    if (!user.runIds.includes(valid.run_id)) await user.save([...user.runIds, valid.run_id]);
    await user.writeRun(valid.run_id, `${JSON.stringify(valid, null, 2)}\n`);
    return { outcome: 'created', stored: valid };
  });
}
