import type { Command } from 'commander';
import { envSettings } from '../config.ts';
import { followExtension } from './follow.ts';
import type { CliIO } from './io.ts';
import { addOperationCommands, type PrintResult } from './operation-commands.ts';
import { OPERATION_COMMANDS } from './operation-manifest.ts';
import type { OutputOptions } from './output/output-options.ts';
import { printOutput } from './output/print-output.ts';
import { finishTree, rootCommand } from './root-command.ts';

/** Prints a body as the output options ask (output/print-output.ts): JSON, YAML, TSV, CSV or a table. */
export type Print = (body: unknown, options: OutputOptions, columns?: readonly string[]) => Promise<void>;

/** The printers of `io`: of any body, and of an operation's answer (with the operation's table columns). */
export function printers(io: CliIO): { print: Print; printResult: PrintResult } {
  const color = io.isTTY && !envSettings(io.env).noColor;
  const print: Print = (body, options, columns) => printOutput(io, body, options, { color, columns });
  const printResult: PrintResult = async (op, result, options) => {
    // No body (204): nothing on stdout, exactly as the HTTP answer.
    if (result.body === undefined) return;
    await print(result.body, options, op.cli ? op.cli.columns : undefined);
  };
  return { print, printResult };
}

/** The extensions of operation commands, by their words (`work feed --follow`). */
export function commandExtensions(io: CliIO) {
  return { 'work feed': followExtension(io) };
}

/**
 * `estate` (`program`, made by rootCommand) with only the operation commands
 * under `group` (`trends`, and `trends latest`), exactly as the whole tree
 * (program.ts) has them: what a command line that runs one of them needs,
 * without building the rest.
 */
export function buildOperationProgram(io: CliIO, group: string, program: Command = rootCommand()): Command {
  const commands = OPERATION_COMMANDS.filter((c) => c.words[0] === group);
  addOperationCommands(program, commands, io, printers(io).printResult, commandExtensions(io));
  return finishTree(program, io);
}
