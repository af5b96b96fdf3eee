import { EstateError } from '../../../errors.ts';
import { recordDifferences } from '../../keyed-log.ts';
import { newRunRecord, quotaExceeded, RUN_ID, trainingRunSchema, type TrainingRun } from '../../training.ts';
import type { TrainingRuns } from '../store.ts';
import { transaction, withinDeadline, type JSONValue, type Sql } from './connect.ts';

/** First key of the per-user advisory locks that keep the run quota against concurrent creators ("estt"). */
const TRAINING_LOCK = 0x65737474;

/** Training runs in `training_runs`: one row per run, each read only by its user. */
export function postgresTraining(sql: Sql, store: string): TrainingRuns {
  const parse = (run: unknown, runId: string): TrainingRun | undefined => {
    const parsed = trainingRunSchema.safeParse(run);
    return parsed.success && parsed.data.run_id === runId ? parsed.data : undefined;
  };
  return {
    create: (userId, fields, limits, now) => {
      const run = newRunRecord(userId, fields, limits, now);
      return withinDeadline(store, () =>
        transaction(sql, async (tx) => {
          await tx`SELECT pg_advisory_xact_lock(${TRAINING_LOCK}, hashtext(${userId}))`;
          const [row] = await tx`SELECT count(*)::int AS n FROM training_runs WHERE user_id = ${userId}`;
          const count = Number(row?.n ?? 0);
          if (count >= limits.maxRunsPerUser) throw quotaExceeded(userId, count);
          await tx`INSERT INTO training_runs (run_id, user_id, created_at, run) VALUES (${run.run_id}, ${userId}, ${run.created_at}, ${tx.json(run as unknown as JSONValue)})`;
          return run;
        }),
      );
    },
    get: async (userId, runId) => {
      if (!RUN_ID.test(runId)) return undefined;
      const [row] = await withinDeadline(store, () => sql`SELECT run FROM training_runs WHERE run_id = ${runId} AND user_id = ${userId}`);
      return row ? parse(row.run, runId) : undefined;
    },
    list: async (userId) => {
      const rows = await withinDeadline(store, () => sql`SELECT run_id, run FROM training_runs WHERE user_id = ${userId} ORDER BY created_at COLLATE "C" DESC, run_id COLLATE "C" DESC`);
      return rows.flatMap((row) => parse(row.run, String(row.run_id)) ?? []);
    },
    delete: async (userId, runId) => {
      if (!RUN_ID.test(runId)) return false;
      const rows = await withinDeadline(store, () => sql`DELETE FROM training_runs WHERE run_id = ${runId} AND user_id = ${userId} RETURNING run_id`);
      return rows.length > 0;
    },
    pages: async function* (pageSize) {
      let cursor = '';
      for (;;) {
        const from = cursor;
        const rows = await withinDeadline(
          store,
          () => sql`SELECT run_id, run FROM training_runs WHERE run_id COLLATE "C" > ${from} ORDER BY run_id COLLATE "C" LIMIT ${pageSize}`,
        );
        const last = rows.at(-1);
        if (!last) return;
        cursor = String(last.run_id);
        const runs = rows.flatMap((row) => parse(row.run, String(row.run_id)) ?? []);
        yield { runs, skipped: rows.length - runs.length };
        if (rows.length < pageSize) return;
      }
    },
    restore: async (input) => {
      const checked = trainingRunSchema.safeParse(input);
      if (!checked.success) throw new EstateError('validation', `not a training run: ${checked.error.issues[0]?.message ?? 'invalid'}`);
      const run = checked.data;
      return withinDeadline(store, () =>
        transaction(sql, async (tx) => {
          const inserted = await tx`INSERT INTO training_runs (run_id, user_id, created_at, run)
            VALUES (${run.run_id}, ${run.user_id}, ${run.created_at}, ${tx.json(run as unknown as JSONValue)}) ON CONFLICT (run_id) DO NOTHING RETURNING run_id`;
          if (inserted.length > 0) return { outcome: 'created' as const, stored: run };
          const [row] = await tx`SELECT run FROM training_runs WHERE run_id = ${run.run_id}`;
          const stored = row ? parse(row.run, run.run_id) : undefined;
          return { outcome: stored && recordDifferences(stored, run).length === 0 ? ('present' as const) : ('conflict' as const), stored };
        }),
      );
    },
  };
}
