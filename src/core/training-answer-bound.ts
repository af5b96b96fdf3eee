// What bounds `GET /training/runs`: it answers every run of the caller in
// one JSON array built in memory, so the quotas (config `training`) may not
// let one user's runs make an answer over MAX_RUNS_ANSWER_BYTES.

/** The most one user's listing of training runs may take, in bytes of JSON. */
export const MAX_RUNS_ANSWER_BYTES = 16 * 1024 * 1024;

/**
 * The most a run takes in a listing besides its `params`: its ids, status
 * and times, a user id of 64 characters, and `name`, `model` and `dataset`
 * at their longest (200, 200 and 500 characters) with every character one
 * JSON spends 6 bytes on (a lone surrogate, `\udc00`); and a comma.
 */
export const RUN_FIELDS_BYTES = 6 * 1024;

/** The largest listing quotas of `maxRunsPerUser` runs of `maxParamsBytes` of params allow (the brackets aside). */
export function worstRunsAnswerBytes(maxRunsPerUser: number, maxParamsBytes: number): number {
  return maxRunsPerUser * (maxParamsBytes + RUN_FIELDS_BYTES);
}
