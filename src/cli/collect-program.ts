import type { Command } from 'commander';
import { collectCommand } from './commands/collect.ts';
import type { CliIO } from './io.ts';
import { finishTree, rootCommand } from './root-command.ts';

/**
 * `estate` (`program`, made by rootCommand) with only `collect` under it,
 * exactly as the whole tree (program.ts) has it. A collector runs for
 * months beside what it measures: the commands of the whole tree it never
 * runs would stay in its heap all that time (BENCHMARKS.md, "Issue 24: the
 * collector").
 */
export function buildCollectProgram(io: CliIO, program: Command = rootCommand()): Command {
  program.addCommand(collectCommand(io));
  return finishTree(program, io);
}
