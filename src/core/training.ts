import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, readdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from './atomic-write.ts';
import { dataPath } from './data-files.ts';
import { isNotFound } from './fs-errors.ts';

// Training runs, one JSON file each: `training/runs/<run_id>.json`, written
// atomically. Every function takes the user a run must belong to; a run of
// another user is answered exactly as a run that does not exist. A run id
// is checked against RUN_ID before it is joined to any path.

/** `run_` and 16 lowercase hex digits. */
export const RUN_ID = /^run_[0-9a-f]{16}$/;

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

/** Creates a queued run owned by `userId`. */
export async function createRun(dataDir: string, userId: string, fields: NewRun, now = new Date()): Promise<TrainingRun> {
  const at = now.toISOString();
  const run: TrainingRun = {
    run_id: `run_${randomBytes(8).toString('hex')}`,
    user_id: userId,
    status: 'queued',
    name: fields.name ?? null,
    model: fields.model ?? null,
    dataset: fields.dataset ?? null,
    params: fields.params ?? {},
    created_at: at,
    updated_at: at,
  };
  await mkdir(dataPath(dataDir, 'trainingRuns'), { recursive: true, mode: 0o700 });
  await writeFileAtomic(runFile(dataDir, run.run_id) as string, `${JSON.stringify(run, null, 2)}\n`, 0o600);
  return run;
}

/** Reads one run file; undefined when it is missing, not a regular file, corrupt, or not the run its name says. */
async function readRun(file: string, runId: string): Promise<TrainingRun | undefined> {
  let text: string;
  try {
    // O_NOFOLLOW: a symlink planted in the runs folder is never followed out of it.
    const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      if (!(await handle.stat()).isFile()) return undefined;
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (err) {
    if (isNotFound(err) || (err as NodeJS.ErrnoException).code === 'ELOOP') return undefined;
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = trainingRunSchema.safeParse(json);
  return parsed.success && parsed.data.run_id === runId ? parsed.data : undefined;
}

/** The run, if it exists and belongs to `userId`. */
export async function getRun(dataDir: string, userId: string, runId: string): Promise<TrainingRun | undefined> {
  const file = runFile(dataDir, runId);
  if (!file) return undefined;
  const run = await readRun(file, runId);
  return run?.user_id === userId ? run : undefined;
}

/** The runs of `userId`, newest first. Unreadable or corrupt files are skipped. */
export async function listRuns(dataDir: string, userId: string): Promise<TrainingRun[]> {
  let names: string[];
  try {
    names = await readdir(dataPath(dataDir, 'trainingRuns'));
  } catch (err) {
    if (isNotFound(err)) return [];
    throw err;
  }
  const runs: TrainingRun[] = [];
  for (const name of names) {
    const runId = name.slice(0, -'.json'.length);
    const file = name.endsWith('.json') ? runFile(dataDir, runId) : undefined;
    if (!file) continue;
    const run = await readRun(file, runId).catch(() => undefined);
    if (run?.user_id === userId) runs.push(run);
  }
  return runs.sort((a, b) => b.created_at.localeCompare(a.created_at) || b.run_id.localeCompare(a.run_id));
}

/** Deletes the run if it exists and belongs to `userId`; false otherwise. */
export async function deleteRun(dataDir: string, userId: string, runId: string): Promise<boolean> {
  const file = runFile(dataDir, runId);
  if (!file) return false;
  const run = await readRun(file, runId);
  if (run?.user_id !== userId) return false;
  try {
    await unlink(file);
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}
