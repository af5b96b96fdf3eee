import { type Command, CommanderError } from 'commander';
import { z } from 'zod';
import { EstateError, toEstateError } from '../errors.ts';
import { errorExitCode, ExitStatus } from './exit-status.ts';
import type { CliIO } from './io.ts';
import { OPERATION_COMMANDS } from './operation-manifest.ts';
import { cliMessage } from './error-message.ts';
import { firstCommandWord, rootCommand } from './root-command.ts';
import { escapeControls } from './safe-text.ts';

/** The top-level commands that run operations (`trends`, `work`, …). */
const OPERATION_GROUPS: ReadonlySet<string> = new Set(OPERATION_COMMANDS.map((c) => c.words[0] as string));

/**
 * Runs one command line; resolves to the exit code. Never throws, never exits
 * the process. A command with an error exit code (`pulse status`: 3) exits
 * with it on any error, from its options to its answer.
 */
export async function runCli(argv: readonly string[], io: CliIO): Promise<number> {
  const root = rootCommand();
  const first = firstCommandWord(root, argv);
  // A command line checks each schema it uses a few times at most: zod's
  // compiled parsers (one `new Function` per object schema) cost more than
  // they save. The server keeps them: it checks every answer.
  if (first !== 'serve') z.config({ jitless: true });
  // A command line that runs an operation, or the collector, builds only its own commands.
  const program =
    first !== undefined && OPERATION_GROUPS.has(first)
      ? (await import('./operation-program.ts')).buildOperationProgram(io, first, root)
      : first === 'collect'
        ? (await import('./collect-program.ts')).buildCollectProgram(io, root)
        : (await import('./program.ts')).buildProgram(io, root);
  let reached: Command = program;
  const track = (cmd: Command) => {
    cmd.hook('preSubcommand', (_parent, sub) => void (reached = sub));
    cmd.commands.forEach(track);
  };
  track(program);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (err) {
    // The answer's own status (`pulse status` degraded: 1), not an error.
    if (err instanceof ExitStatus) return err.code;
    const code = reportError(err, argv, io);
    return code === 0 ? 0 : (errorExitCode(reached) ?? code);
  }
}

/** Says what went wrong (commander has said it already for its own errors); resolves to the usual exit code. */
function reportError(err: unknown, argv: readonly string[], io: CliIO): number {
  // commander has printed its message already; help and version are not failures.
  if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
  const debug = argv.includes('--debug');
  // Errors with a known meaning (a full disk) get their message; others are shown as they are.
  // Always one line, whatever the message carries (it may quote a server or a file).
  const known = toEstateError(err);
  const error = err instanceof EstateError || known.code !== 'internal' ? known : undefined;
  io.stderr(`estate: ${escapeControls(error ? cliMessage(error) : String((err as Error)?.message ?? err))}\n`);
  if (debug && err instanceof Error && err.stack) io.stderr(`${escapeControls(err.stack, true)}\n`);
  if (debug && error?.cause instanceof Error && error.cause.stack) io.stderr(`caused by: ${escapeControls(error.cause.stack, true)}\n`);
  return error ? error.exitCode : 1;
}
