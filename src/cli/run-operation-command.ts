import type { z } from 'zod';
import type { EstateContext, Principal } from '../api/context.ts';
import type { Operation } from '../api/define-operation.ts';
import type { RawInput } from '../api/parse-input.ts';
import { runOperation, type OperationResult } from '../api/run-operation.ts';
import { EstateError, validationError } from '../errors.ts';
import type { ManifestRun } from './command-manifest.ts';
import type { CommonOptions } from './common-options.ts';
import { exitForAnswer } from './exit-status.ts';
import type { CliIO } from './io.ts';
import { localContext, remoteTarget } from './local-context.ts';
import type { CommandExtension, CommandRun, PrintResult } from './operation-commands.ts';
import { loadOperation } from './operation-manifest.ts';
import { optionKey } from './option-names.ts';
import { startProgress } from './progress.ts';

// What an operation command does when it runs (operation-commands.ts builds
// it): loaded with the one operation it runs, not when the tree is built.

export interface OperationCommandCall {
  run: ManifestRun;
  /** commander's action arguments: the positional arguments, then the options. */
  args: unknown[];
  io: CliIO;
  print: PrintResult;
  extension: CommandExtension | undefined;
}

/** Runs the operation a command line names, locally against the data dir or with --url on a server, and prints its answer. */
export async function runOperationCommand({ run, args, io, print, extension }: OperationCommandCall): Promise<void> {
  const [most] = run.variants.at(-1) as [number, string];
  const positional = args.slice(0, most).filter((a): a is string => typeof a === 'string');
  const options = (args[most] ?? {}) as CommonOptions & Record<string, string | undefined>;
  const [, id] = run.variants.find(([count]) => count === positional.length) ?? (run.variants[0] as [number, string]);
  const op = await loadOperation(id);
  const raw = rawInput(op, positional, options);
  const target = remoteTarget(options, io);
  if (options.watch || options.interval !== undefined) {
    const { watchOperation } = await import('./watch.ts');
    const ctx = target ? undefined : localContext(options, io);
    try {
      const principal = ctx && (await localPrincipal(op, options.user));
      return await watchOperation({ op, raw, io, options, remote: target, ctx, principal, print: (r) => print(op, r, options) });
    } finally {
      await ctx?.store.close();
    }
  }
  const stopProgress = startProgress(io, op.cli ? op.cli.progress : undefined);
  let result: OperationResult;
  let ctx: EstateContext | undefined;
  let undo: (() => Promise<void>) | undefined;
  try {
    if (!target) ctx = localContext(options, io);
    undo = await extension?.before?.(options, ctx);
    if (target) result = await (await import('./remote-call.ts')).remoteCall(op, target, raw);
    else result = await runOperation(op, ctx as EstateContext, raw, await localPrincipal(op, options.user));
  } catch (err) {
    await undo?.();
    await ctx?.store.close();
    throw err;
  } finally {
    stopProgress();
  }
  const done: CommandRun = { op, raw, result, options, remote: target, ctx };
  try {
    if (!extension?.print?.(done)) await print(op, result, options);
    await extension?.after(done);
  } finally {
    await undo?.();
    await ctx?.store.close();
  }
  exitForAnswer(op, result.body);
}

function rawInput(op: Operation, positional: string[], options: Record<string, unknown>): RawInput {
  const path: Record<string, string> = {};
  (op.cli ? (op.cli.args ?? []) : []).forEach((arg, i) => {
    const value = positional[i];
    if (value !== undefined) Object.assign(path, splitArgument(arg, value));
  });
  const query: Record<string, string | undefined> = {};
  for (const field of Object.keys(op.input.query?.shape ?? {})) {
    const value = options[optionKey(field)];
    if (typeof value === 'string') query[field] = value;
  }
  let body: Record<string, unknown> | undefined;
  if (op.input.body) {
    body = {};
    for (const [field, schema] of Object.entries(op.input.body.shape)) {
      const value = options[optionKey(field)];
      if (typeof value === 'string') body[field] = isObjectField(schema as z.ZodType) ? parseJsonOption(field, value) : value;
    }
  }
  return { path, query, body };
}

/** One positional argument as path parameters: `owner/repo` splits `estate/infra` into owner and repo. */
function splitArgument(arg: string, value: string): Record<string, string> {
  const names = arg.split('/');
  if (names.length === 1) return { [arg]: value };
  const parts = value.split('/');
  if (parts.length !== names.length || parts.some((p) => !p)) {
    throw new EstateError('usage', `<${arg}> must look like ${names.map((n) => n.toUpperCase()).join('/')}, not "${value}"`);
  }
  return Object.fromEntries(names.map((name, i) => [name, parts[i] as string]));
}

/**
 * Locally, a `user` operation acts as the user named by --user, with every
 * scope (whoever holds the data dir holds every key); other operations have no user.
 */
async function localPrincipal(op: Operation, user: string | undefined): Promise<Principal | undefined> {
  if (op.access !== 'user') return undefined;
  const command = op.cli ? op.cli.command : op.id;
  if (user === undefined) throw new EstateError('usage', `${command} needs --user USER locally (with --url, the credential decides the user)`);
  const [{ assertUserId }, { DEFAULT_SCOPES }] = await Promise.all([import('../core/keys/key-store.ts'), import('../core/keys/scopes.ts')]);
  assertUserId(user);
  return { userId: user, keyId: 'local', scopes: DEFAULT_SCOPES };
}

/** Body fields that hold a JSON object are typed on the command line as JSON text. */
function isObjectField(schema: z.ZodType): boolean {
  let def = schema._zod.def as { type: string; innerType?: z.ZodType };
  while (def.innerType && (def.type === 'optional' || def.type === 'default' || def.type === 'nullable')) def = def.innerType._zod.def as typeof def;
  return def.type === 'record' || def.type === 'object';
}

function parseJsonOption(field: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw validationError([{ loc: ['body', field], msg: 'Invalid JSON: give a JSON object, like \'{"key": 1}\'', type: 'json_invalid' }]);
  }
}
