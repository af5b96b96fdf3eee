import { z } from 'zod';
import { trainingRunSchema } from '../../core/training.ts';
import { EstateError } from '../../errors.ts';
import type { Principal } from '../context.ts';
import { defineOperation, reply } from '../define-operation.ts';
import { dateTime } from '../schemas.ts';
import { optionalLineField } from '../text-fields.ts';

// The training-run component. Every route is scoped to the credential's user:
// a run of another user, a run that does not exist and a value that is no run
// id at all are the same 404, with the same body (the seed's "otherwise 404").

const run = trainingRunSchema
  .extend({ created_at: dateTime('When the run was created, UTC.'), updated_at: dateTime('When the run last changed, UTC.') })
  .meta({ id: 'TrainingRun', description: 'A training run; `user_id` is the user whose credential created it.' });
// Any text is accepted here: a value that is not a run id is not found (404), never a 422,
// and the core checks it against RUN_ID before it comes near a path.
const runIdPath = z.object({
  run_id: z.string().meta({ description: 'The run id: `run_` and 16 lowercase hex digits. Any other value is not found (404), like a run that does not exist.', examples: ['run_0123456789abcdef'] }),
});
const USER_HINT = 'Run ids belong to the user whose credential created them.';

/** One body for every run the caller cannot see, whatever the id: nothing tells a foreign run from a missing one. */
function notFound(): EstateError {
  return new EstateError('not_found', 'training run not found');
}

/** The user of a call that needs one; 403 without a credential. */
function requireUser(principal: Principal | undefined): string {
  if (!principal) throw new EstateError('forbidden', 'Starting a training run needs a user: send an API key or a bearer token');
  return principal.userId;
}

export const trainingStart = defineOperation({
  id: 'training.start',
  method: 'POST',
  path: '/training/start',
  access: 'user',
  tag: 'training',
  summary: "Start a training run owned by the credential's user",
  description: [
    'Every body field is optional; `{}` is a valid body. The run is created queued.',
    'Quotas (config `training`): `params` may hold at most `max_params_bytes` bytes as compact JSON (default 10240), else **413**;',
    'a user may own at most `max_runs_per_user` runs (default 1000), else **422** with `loc: ["body"]` and `type: "quota_exceeded"`.',
  ].join(' '),
  input: {
    body: z.strictObject({
      name: optionalLineField(200, 'A label for the run.'),
      model: optionalLineField(200, 'The model to train.'),
      dataset: optionalLineField(500, 'The dataset to train on.'),
      params: z.record(z.string().max(200), z.unknown()).optional().meta({ description: 'Training parameters, a JSON object (on the CLI: --params \'{"lr":0.001}\').' }),
    }),
  },
  output: run,
  status: 201,
  location: (created) => `/training/runs/${encodeURIComponent(created.run_id)}`,
  handler: ({ ctx, input, principal }) => {
    const { max_runs_per_user: maxRunsPerUser, max_params_bytes: maxParamsBytes } = ctx.config.training;
    return ctx.store.training.create(requireUser(principal), input.body, { maxRunsPerUser, maxParamsBytes }, ctx.now());
  },
  cli: { command: 'training start', examples: ['estate training start --user alice --name nightly --model small-7b --params \'{"epochs":3}\''] },
});

export const trainingList = defineOperation({
  id: 'training.list',
  method: 'GET',
  path: '/training/runs',
  access: 'user',
  tag: 'training',
  summary: "The credential user's training runs, newest first",
  description: 'A bare JSON array of all the user\'s runs; `[]` when the request carries no credential. The quotas of `POST /training/start` keep it within 16 MiB.',
  output: z.array(run),
  handler: ({ ctx, principal }) => (principal ? ctx.store.training.list(principal.userId) : []),
  cli: { command: 'training list', columns: ['run_id', 'status', 'name', 'model', 'dataset', 'created_at'], examples: ['estate training list --user alice'] },
});

export const trainingGet = defineOperation({
  id: 'training.get',
  method: 'GET',
  path: '/training/runs/{run_id}',
  access: 'user',
  tag: 'training',
  summary: "One of the credential user's training runs",
  description: USER_HINT,
  input: { path: runIdPath },
  output: run,
  errors: [404],
  handler: async ({ ctx, input, principal }) => {
    const found = principal ? await ctx.store.training.get(principal.userId, input.path.run_id) : undefined;
    if (!found) throw notFound();
    return found;
  },
  cli: { command: 'training show', args: ['run_id'], examples: ['estate training show run_0123456789abcdef --user alice'] },
});

export const trainingDelete = defineOperation({
  id: 'training.delete',
  method: 'DELETE',
  path: '/training/runs/{run_id}',
  access: 'user',
  tag: 'training',
  summary: "Delete one of the credential user's training runs",
  description: `${USER_HINT} Answers 204 with no body.`,
  input: { path: runIdPath },
  output: z.undefined(),
  status: 204,
  errors: [404],
  handler: async ({ ctx, input, principal }) => {
    const deleted = principal ? await ctx.store.training.delete(principal.userId, input.path.run_id) : false;
    if (!deleted) throw notFound();
    return reply(204, undefined);
  },
  cli: { command: 'training delete', args: ['run_id'], examples: ['estate training delete run_0123456789abcdef --user alice'] },
});
