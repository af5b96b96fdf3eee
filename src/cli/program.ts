import type { Command } from 'commander';
import { collectCommand } from './commands/collect.ts';
import { completeValuesCommand, completionCommand } from './commands/completion.ts';
import { doctorCommand } from './commands/doctor.ts';
import { initCommand } from './commands/init.ts';
import { contextCommand } from './commands/context.ts';
import { keysCommand } from './commands/keys.ts';
import { manCommand } from './commands/man.ts';
import { migrateCommand } from './commands/migrate.ts';
import { openapiCommand } from './commands/openapi.ts';
import { mcpCommand } from './commands/mcp.ts';
import { pruneCommand } from './commands/prune.ts';
import { rollupsCommand } from './commands/rollups.ts';
import { serveCommand } from './commands/serve.ts';
import { storeCommand } from './commands/store-copy.ts';
import { tokenCommand } from './commands/token.ts';
import type { CliIO } from './io.ts';
import { addOperationCommands } from './operation-commands.ts';
import { OPERATION_COMMANDS } from './operation-manifest.ts';
import { commandExtensions, printers } from './operation-program.ts';
import { finishTree, rootCommand } from './root-command.ts';

/**
 * The whole command tree under `program` (made by rootCommand): one
 * subcommand per operation of the API table, plus the commands that are not
 * operations (serve, init, keys). Parsing never
 * exits the process (exitOverride); output goes through `io`. A command line
 * that runs an operation builds only its own commands (operation-program.ts).
 */
export function buildProgram(io: CliIO, program: Command = rootCommand()): Command {
  const { print, printResult } = printers(io);
  program.addCommand(serveCommand(io));
  program.addCommand(initCommand(io));
  program.addCommand(migrateCommand(io));
  program.addCommand(pruneCommand(io));
  program.addCommand(rollupsCommand(io));
  program.addCommand(collectCommand(io));
  program.addCommand(storeCommand(io));
  program.addCommand(keysCommand(io, print));
  program.addCommand(contextCommand(io, print));
  program.addCommand(tokenCommand(io));
  addOperationCommands(program, OPERATION_COMMANDS, io, printResult, commandExtensions(io));
  program.addCommand(doctorCommand(io));
  program.addCommand(openapiCommand(io));
  program.addCommand(mcpCommand(io));
  program.addCommand(completionCommand(io, () => program));
  program.addCommand(manCommand(io, () => program), { hidden: true });
  program.addCommand(completeValuesCommand(io), { hidden: true });
  return finishTree(program, io);
}
