import { type Command, Option } from 'commander';
import type { EstateContext } from '../api/context.ts';
import type { Operation } from '../api/define-operation.ts';
import type { RawInput } from '../api/parse-input.ts';
import type { OperationResult } from '../api/run-operation.ts';
import type { ManifestCommand, ManifestRun } from './command-manifest.ts';
import { addCommonOptions, type CommonOptions } from './common-options.ts';
import { setErrorExitCode } from './exit-status.ts';
import type { CliIO } from './io.ts';
import type { RemoteTarget } from './remote-call.ts';
import { watchOptions } from './watch.ts';

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

/** Prints an operation's answer as the command's output options ask. */
export type PrintResult = (op: Operation, result: OperationResult, options: CommonOptions) => void | Promise<void>;

/**
 * Adds the operation commands of `commands` (the manifest, see
 * command-manifest.ts) under `program`. Each runs its operation locally
 * against the data dir, or remotely with --url; the operation's module is
 * loaded only when the command runs.
 */
export function addOperationCommands(
  program: Command,
  commands: readonly ManifestCommand[],
  io: CliIO,
  print: PrintResult,
  /** By `cli.command` words. */
  extensions: Readonly<Record<string, CommandExtension>> = {},
): void {
  const built = new Map<string, Command>();
  for (const { words, run } of commands) {
    const key = words.join(' ');
    const parent = words.length > 1 ? built.get(words.slice(0, -1).join(' ')) : program;
    if (!parent) throw new Error(`operation commands: ${key} comes before its group`);
    const cmd = parent.command(words.at(-1) as string);
    built.set(key, cmd);
    if (run) addRun(cmd, run, io, print, extensions[key]);
  }
}

function addRun(cmd: Command, run: ManifestRun, io: CliIO, print: PrintResult, extension: CommandExtension | undefined): void {
  cmd.description(run.description);
  for (const arg of run.arguments) cmd.argument(arg.syntax, arg.description);
  for (const option of run.options) cmd.addOption(new Option(option.flags, option.description).makeOptionMandatory(option.mandatory));
  if (run.user) cmd.addOption(new Option('--user <user>', 'the user to act as, required locally (with --url the credential decides, and this is ignored)'));
  for (const option of extension?.options ?? []) cmd.addOption(option);
  if (run.watch) for (const option of watchOptions()) cmd.addOption(option);
  addCommonOptions(cmd, run.jsonFields);
  if (run.exitCodesHelp) cmd.addHelpText('after', run.exitCodesHelp);
  if (run.errorExitCode !== undefined) setErrorExitCode(cmd, run.errorExitCode);
  cmd.addHelpText('after', `\nExamples:\n${run.examples.map((e) => `  $ ${e}`).join('\n')}\n`);
  cmd.action(async (...args: unknown[]) => {
    const { runOperationCommand } = await import('./run-operation-command.ts');
    await runOperationCommand({ run, args, io, print, extension });
  });
}
