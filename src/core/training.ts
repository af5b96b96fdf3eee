import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import { EstateError } from '../errors.ts';
import { dataPath } from './data-files.ts';
import { isNotFound } from './fs-errors.ts';
import { fileRefusal, openDataFile } from './open-data-file.ts';
import { changeUserRuns, indexedRunIds, RUN_ID, runFileExists } from './training-index.ts';

// Training runs, one JSON file each: `training/runs/<run_id>.json`, written
// atomically. Every function takes the user a run must belong to; a run of
// another user is answered exactly as a run that does not exist. A run id
// is checked against RUN_ID before it is joined to any path. Every change
// goes through the per-user index (training-index.ts), so a listing reads
// only the caller's run files.

export { RUN_ID };

/** The quotas of each user: how many runs, how many bytes of params (as compact JSON, UTF-8) per run. */
export interface TrainingLimits {
  maxRunsPerUser: number;
  maxParamsBytes: number;
}

export const RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;

export const trainingRunSchema = z.object({
  run_id: z.string().regex(RUN_ID),
  user_id: z.string(),
  status: z.enum(RUN_STATUSES),
  name: z.string().nullable(),
  model: z.string().nullable(),
  dataset: z.string().nullable(),
  params: z.record(z.string(), z.unknown()),
  created_at: z.string(),
  updated_at: z.string(),
});

export type TrainingRun = z.output<typeof trainingRunSchema>;

export interface NewRun {
  name?: string | undefined;
  model?: string | undefined;
  dataset?: string | undefined;
  params?: Record<string, unknown> | undefined;
}

function runFile(dataDir: string, runId: string): string | undefined {
  return RUN_ID.test(runId) ? path.join(dataPath(dataDir, 'trainingRuns'), `${runId}.json`) : undefined;
}

/**
 * Creates a queued run owned by `userId`. Refuses params over
 * `limits.maxParamsBytes` (`payload_too_large`) and a run past
 * `limits.maxRunsPerUser` (`validation`, loc `["body"]`, type `quota_exceeded`).
 */
export async function createRun(dataDir: string, userId: string, fields: NewRun, limits: TrainingLimits, now = new Date()): Promise<TrainingRun> {
  const run = newRunRecord(userId, fields, limits, now);
  return changeUserRuns(dataDir, userId, async (user) => {
    let runIds = user.runIds;
    if (runIds.length >= limits.maxRunsPerUser) {
      // Ids whose file is gone (a crash between index and file) do not count.
      const present = await Promise.all(runIds.map((id) => runFileExists(dataDir, id)));
      runIds = runIds.filter((_, i) => present[i]);
    }
    if (runIds.length >= limits.maxRunsPerUser) throw quotaExceeded(userId, runIds.length);
    await user.save([...runIds, run.run_id]);
    await user.writeRun(run.run_id, `${JSON.stringify(run, null, 2)}\n`);
    return run;
  });
}

/**
 * A new queued run of `userId` (what every store's `training.create`
 * stores); params over `limits.maxParamsBytes` are `payload_too_large`.
 */
export function newRunRecord(userId: string, fields: NewRun, limits: TrainingLimits, now: Date): TrainingRun {
  const params = fields.params ?? {};
  const paramsBytes = Buffer.byteLength(JSON.stringify(params), 'utf8');
  if (paramsBytes > limits.maxParamsBytes) {
    throw new EstateError('payload_too_large', `params is ${paramsBytes} bytes as JSON; a run's params may hold at most ${limits.maxParamsBytes} (training.max_params_bytes)`);
  }
  const at = now.toISOString();
  return {
    run_id: `run_${randomBytes(8).toString('hex')}`,
    user_id: userId,
    status: 'queued',
    name: fields.name ?? null,
    model: fields.model ?? null,
    dataset: fields.dataset ?? null,
    params,
    created_at: at,
    updated_at: at,
  };
}

/** The refusal of a run past the quota: `validation`, loc ["body"], type `quota_exceeded`. */
export function quotaExceeded(userId: string, count: number): EstateError {
  const msg = `quota exceeded: user ${userId} has ${count} training runs, the most allowed (training.max_runs_per_user); delete one first`;
  return new EstateError('validation', msg, { issues: [{ loc: ['body'], msg, type: 'quota_exceeded' }] });
}

/**
 * Reads one run file: the run; `unreadable` when the file is there but is no
 * run (not a regular file, a link, corrupt, or another run's); undefined when
 * there is no file.
 */
export async function readRunFile(file: string, runId: string): Promise<TrainingRun | 'unreadable' | undefined> {
  let text: string;
  try {
    // A link planted in the runs folder is never followed out of it, and is no run.
    const handle = await openDataFile(file);
    try {
      if (!(await handle.stat()).isFile()) return 'unreadable';
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (err) {
    if (isNotFound(err)) return undefined;
    if (fileRefusal(err)) return 'unreadable';
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return 'unreadable';
  }
  const parsed = trainingRunSchema.safeParse(json);
  return parsed.success && parsed.data.run_id === runId ? parsed.data : 'unreadable';
}

/** Reads one run file; undefined when it is missing or no run (readRunFile). */
async function readRun(file: string, runId: string): Promise<TrainingRun | undefined> {
  const run = await readRunFile(file, runId);
  return run === 'unreadable' ? undefined : run;
}

/** The run, if it exists and belongs to `userId`. */
export async function getRun(dataDir: string, userId: string, runId: string): Promise<TrainingRun | undefined> {
  const file = runFile(dataDir, runId);
  if (!file) return undefined;
  const run = await readRun(file, runId);
  return run?.user_id === userId ? run : undefined;
}

/** The runs of `userId`, newest first; reads only that user's run files. Unreadable or corrupt files are skipped. */
export async function listRuns(dataDir: string, userId: string): Promise<TrainingRun[]> {
  const runs: TrainingRun[] = [];
  for (const runId of new Set(await indexedRunIds(dataDir, userId))) {
    const file = runFile(dataDir, runId);
    const run = file ? await readRun(file, runId).catch(() => undefined) : undefined;
    if (run?.user_id === userId) runs.push(run);
  }
  return runs.sort((a, b) => b.created_at.localeCompare(a.created_at) || b.run_id.localeCompare(a.run_id));
}

/** Deletes the run if it exists and belongs to `userId`; false otherwise. Any run id is accepted: one that is not a run id is false. */
export async function deleteRun(dataDir: string, userId: string, runId: string): Promise<boolean> {
  const file = runFile(dataDir, runId);
  if (!file) return false;
  if ((await readRun(file, runId))?.user_id !== userId) return false;
  return changeUserRuns(dataDir, userId, async (user) => {
    // Checked again under the lock: another process may have deleted it meanwhile.
    if ((await readRun(file, runId))?.user_id !== userId) return false;
    // A file that cannot be removed stays in the index; one already gone leaves it.
    const unlinked = await user.removeRun(runId);
    await user.save(user.runIds.filter((id) => id !== runId));
    return unlinked;
  });
}
