import { Command, Option } from 'commander';
import type { z } from 'zod';
import type { EstateContext, Principal } from '../api/context.ts';
import type { Operation } from '../api/define-operation.ts';
import type { RawInput } from '../api/parse-input.ts';
import { runOperation, type OperationResult } from '../api/run-operation.ts';
import { assertUserId, SCOPES } from '../core/keys/key-store.ts';
import { EstateError, validationError } from '../errors.ts';
import { addCommonOptions, type CommonOptions, localContext, remoteTarget } from './common-options.ts';
import { exitCodesHelp, exitForAnswer, setErrorExitCode } from './exit-status.ts';
import type { CliIO } from './io.ts';
import { startProgress } from './progress.ts';
import { remoteCall, type RemoteTarget } from './remote-call.ts';
import { watchOperation, watchOptions } from './watch.ts';

/** Options every operation command has; an input field of the same name is offered as `--entry-<name>` (`url` → `--entry-url`). */
const COMMON_NAMES = new Set(['url', 'api-key', 'json', 'data-dir', 'config', 'debug']);

/** `max_chars` → `--max-chars`; `url` → `--entry-url` (see COMMON_NAMES). */
export function optionFlag(field: string): string {
  const name = field.replace(/_/g, '-');
  return `--${COMMON_NAMES.has(name) ? `entry-${name}` : name}`;
}

/** `max_chars` → `maxChars`, as commander names the parsed option of optionFlag(field). */
function optionKey(field: string): string {
  return optionFlag(field)
    .slice(2)
    .replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** What a command extension sees of the run it follows. */
export interface CommandRun {
  op: Operation;
  raw: RawInput;
  result: OperationResult;
  options: CommonOptions & Record<string, unknown>;
  /** The server called, in remote mode. */
  remote: RemoteTarget | undefined;
  /** The local context the operation ran with, in local mode. */
  ctx: EstateContext | undefined;
}

/** Extra options of one operation command and what they do once its answer is printed (`work feed --follow`). */
export interface CommandExtension {
  options: Option[];
  /**
   * Runs before the operation, with its local context when there is one:
   * what must start before the answer is read (`--follow` subscribes there,
   * so nothing written meanwhile is missed). Returns what undoes it, called
   * once the command ends, whether it failed or not.
   */
  before?: (options: CommandRun['options'], ctx: EstateContext | undefined) => Promise<(() => Promise<void>) | undefined>;
  /** Prints the answer itself instead of the usual rendering when it returns true (`--follow`'s lines). */
  print?: (run: CommandRun) => boolean;
  after: (run: CommandRun) => Promise<void>;
}

interface Node {
  command: Command;
  /** Operations run by this command, by how many positional arguments they take. */
  variants: Map<number, Operation>;
}

/**
 * Adds one subcommand per operation (`cli.command` words, path parameters as
 * positional arguments, query and body fields as options) under `program`.
 * Each runs the operation locally against the data dir, or remotely with --url.
 */
export function addOperationCommands(
  program: Command,
  ops: readonly Operation[],
  io: CliIO,
  print: (op: Operation, result: OperationResult, options: CommonOptions) => void | Promise<void>,
  /** By `cli.command` words. */
  extensions: Readonly<Record<string, CommandExtension>> = {},
): void {
  const nodes = new Map<string, Node>();
  const nodeFor = (words: string[]): Node => {
    const key = words.join(' ');
    let node = nodes.get(key);
    if (node) return node;
    const parent = words.length > 1 ? nodeFor(words.slice(0, -1)).command : program;
    const command = parent.command(words.at(-1) as string);
    node = { command, variants: new Map() };
    nodes.set(key, node);
    return node;
  };

  for (const op of ops) {
    if (op.cli) nodeFor(op.cli.command.split(' ')).variants.set(op.cli.args?.length ?? 0, op);
  }

  for (const node of nodes.values()) {
    if (!node.variants.size) continue;
    const variants = [...node.variants.entries()].sort(([a], [b]) => a - b);
    const [fewest] = variants[0] as [number, Operation];
    const [most, widest] = variants.at(-1) as [number, Operation];
    const cmd = node.command;
    const main = node.variants.get(fewest) as Operation;
    cmd.description(variants.map(([, op], i) => (i ? op.summary.charAt(0).toLowerCase() + op.summary.slice(1) : op.summary)).join('; or, with an argument: '));
    (widest.cli ? (widest.cli.args ?? []) : []).forEach((arg, i) => {
      const required = i < fewest;
      const desc = arg
        .split('/')
        .map((name) => describe(widest.input.path?.shape[name]))
        .filter(Boolean)
        .join(' ');
      cmd.argument(required ? `<${arg}>` : `[${arg}]`, desc);
    });
    const fields = new Map<string, z.ZodType>();
    for (const [, op] of variants) {
      for (const [k, v] of Object.entries(op.input.query?.shape ?? {})) fields.set(k, v as z.ZodType);
      for (const [k, v] of Object.entries(op.input.body?.shape ?? {})) fields.set(k, v as z.ZodType);
    }
    for (const [field, schema] of fields) {
      const fallback = defaultOf(schema);
      const text = [describe(schema), fallback === undefined ? '' : `(default: ${String(fallback)})`].filter(Boolean).join(' ');
      // Required when every variant needs it; help-text.ts checks them all at once ("missing --a, --b").
      const required = variants.every(([, op]) => isRequired(op.input.body?.shape[field] ?? op.input.query?.shape[field]));
      cmd.addOption(new Option(`${optionFlag(field)} <value>`, text).makeOptionMandatory(required));
    }
    if (variants.some(([, op]) => op.access === 'user')) {
      cmd.addOption(new Option('--user <user>', 'the user to act as, required locally (with --url the credential decides, and this is ignored)'));
    }
    const extension = main.cli ? extensions[main.cli.command] : undefined;
    for (const option of extension?.options ?? []) cmd.addOption(option);
    if (main.cli && main.cli.watch) for (const option of watchOptions()) cmd.addOption(option);
    addCommonOptions(cmd);
    if (exitCodesHelp(main)) cmd.addHelpText('after', exitCodesHelp(main));
    if (main.cli && main.cli.errorExitCode !== undefined) {
      setErrorExitCode(cmd, main.cli.errorExitCode);
      cmd.showHelpAfterError(false); // one line
    }
    const examples = variants.flatMap(([, op]) => (op.cli ? op.cli.examples : []));
    cmd.addHelpText('after', `\nExamples:\n${examples.map((e) => `  $ ${e}`).join('\n')}\n`);
    cmd.action(async (...args: unknown[]) => {
      const positional = args.slice(0, most).filter((a): a is string => typeof a === 'string');
      const options = (args[most] ?? {}) as CommonOptions & Record<string, string | undefined>;
      const op = node.variants.get(positional.length) ?? main;
      const raw = rawInput(op, positional, options);
      const target = remoteTarget(options, io);
      if (options.watch || options.interval !== undefined) {
        const ctx = target ? undefined : localContext(options, io);
        try {
          return await watchOperation({ op, raw, io, options, remote: target, ctx, principal: ctx && localPrincipal(op, options.user), print: (r) => print(op, r, options) });
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
        if (target) result = await remoteCall(op, target, raw);
        else result = await runOperation(op, ctx as EstateContext, raw, localPrincipal(op, options.user));
      } catch (err) {
        await undo?.();
        await ctx?.store.close();
        throw err;
      } finally {
        stopProgress();
      }
      const run: CommandRun = { op, raw, result, options, remote: target, ctx };
      try {
        if (!extension?.print?.(run)) await print(op, result, options);
        await extension?.after(run);
      } finally {
        await undo?.();
        await ctx?.store.close();
      }
      exitForAnswer(op, result.body);
    });
  }
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
function localPrincipal(op: Operation, user: string | undefined): Principal | undefined {
  if (op.access !== 'user') return undefined;
  const command = op.cli ? op.cli.command : op.id;
  if (user === undefined) throw new EstateError('usage', `${command} needs --user USER locally (with --url, the credential decides the user)`);
  assertUserId(user);
  return { userId: user, keyId: 'local', scopes: SCOPES };
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

/** A field the input must have: absent, it is 422 `missing`. */
function isRequired(schema: z.ZodType | undefined): boolean {
  return schema !== undefined && !schema.safeParse(undefined).success;
}

function describe(schema: z.ZodType | undefined): string {
  const meta = schema?.meta() as { description?: string } | undefined;
  return meta?.description ?? '';
}

function defaultOf(schema: z.ZodType): unknown {
  const def = schema._zod.def as { type: string; defaultValue?: unknown };
  return def.type === 'default' ? def.defaultValue : undefined;
}
