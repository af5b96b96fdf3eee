import { Command } from 'commander';
import type { Operation } from '../api/define-operation.ts';
import { operations } from '../api/operations/index.ts';
import type { OperationResult } from '../api/run-operation.ts';
import { envSettings } from '../config.ts';
import { VERSION } from '../version.ts';
import { completeValuesCommand, completionCommand } from './commands/completion.ts';
import { doctorCommand } from './commands/doctor.ts';
import { initCommand } from './commands/init.ts';
import { contextCommand } from './commands/context.ts';
import { keysCommand } from './commands/keys.ts';
import { manCommand } from './commands/man.ts';
import { migrateCommand } from './commands/migrate.ts';
import { openapiCommand } from './commands/openapi.ts';
import { serveCommand } from './commands/serve.ts';
import { storeCommand } from './commands/store-copy.ts';
import { tokenCommand } from './commands/token.ts';
import { errorExitCode } from './exit-status.ts';
import { addGroupExamples } from './help-examples.ts';
import { polishHelp } from './help-text.ts';
import { followExtension } from './follow.ts';
import { addGlobalOptions } from './global-options.ts';
import type { CliIO } from './io.ts';
import { addOperationCommands } from './operation-commands.ts';
import type { OutputOptions } from './output/output-options.ts';
import { printOutput } from './output/print-output.ts';
import { escapeControls } from './safe-text.ts';

/**
 * The whole command tree: one subcommand per operation of the API table, plus
 * the commands that are not operations (serve, init, keys). Parsing never
 * exits the process (exitOverride); output goes through `io`.
 */
export function buildProgram(io: CliIO): Command {
  const color = io.isTTY && !envSettings(io.env).noColor;
  // JSON, YAML, TSV, CSV or a table, as the output options ask (output/print-output.ts).
  const print = (body: unknown, options: OutputOptions, columns?: readonly string[]) => printOutput(io, body, options, { color, columns });
  const printResult = async (op: Operation, result: OperationResult, options: OutputOptions) => {
    // No body (204): nothing on stdout, exactly as the HTTP answer.
    if (result.body === undefined) return;
    await print(result.body, options, op.cli ? op.cli.columns : undefined);
  };

  const program = new Command('estate')
    .description('Operations toolkit for a self-run estate of nodes and agents')
    .version(VERSION, '-V, --version', 'print the version number')
    .enablePositionalOptions()
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText(
      'after',
      `
Every read command mirrors an HTTP route and takes the output options --json
(the exact HTTP body; --json FIELD,FIELD for only those fields),
-o json|yaml|tsv|csv|table|wide and --no-headers (a table on a terminal, TSV
in a pipe), --data-dir DIR, and --url URL with --api-key KEY to ask a remote
server instead.

Exit status: 0 success, 1 failure, 2 invalid usage or input, 3 not found,
4 credential missing or refused, 5 conflicting write.

Shell completion: source <(estate completion bash) (or zsh), or for fish
estate completion fish | source.

Examples:
  $ estate init ~/estate && estate keys create --user alice
  $ estate serve --data-dir ~/estate --port 8080
  $ estate trends --limit 10 --json
  $ estate events --url http://hub:8080 --api-key "$KEY"
`,
    );
  program.addCommand(serveCommand(io));
  program.addCommand(initCommand(io));
  program.addCommand(migrateCommand(io));
  program.addCommand(storeCommand(io));
  addGlobalOptions(program);
  program.addCommand(keysCommand(io, print));
  program.addCommand(contextCommand(io, print));
  program.addCommand(tokenCommand(io));
  addOperationCommands(program, operations, io, printResult, { 'work feed': followExtension(io) });
  program.addCommand(doctorCommand(io));
  program.addCommand(openapiCommand(io));
  program.addCommand(completionCommand(io, () => program));
  program.addCommand(manCommand(io, () => program), { hidden: true });
  program.addCommand(completeValuesCommand(io), { hidden: true });
  addGroupExamples(program);
  polishHelp(program);

  const configure = (cmd: Command) => {
    cmd.exitOverride();
    cmd.configureOutput({
      writeOut: (s) => io.stdout(s),
      writeErr: (s) => io.stderr(s),
      // A command whose errors all have one exit status (`pulse status`) keeps them to one line.
      outputError: (s, write) => write(escapeControls(hideOptionValues(oneLine(cmd, s).replace(/^error: /, 'estate: ')), true)),
    });
    for (const sub of cmd.commands) configure(sub);
  };
  configure(program);
  return program;
}

/** commander's `unknown option '--x'\n(Did you mean --y?)` as one line for a command with an error exit code. */
function oneLine(cmd: Command, message: string): string {
  return errorExitCode(cmd) === undefined ? message : `${message.trim().replace(/\s*\n\s*/g, ' ')}\n`;
}

/**
 * commander quotes an unknown option whole (`unknown option '--api-key=…'`):
 * what follows its `=` may be a credential, so it is never echoed.
 */
export function hideOptionValues(message: string): string {
  return message.replace(/(unknown option '[^'=\s]*=)[^\n]*'/g, "$1…'");
}
