import { Command } from 'commander';
import { VERSION } from '../version.ts';
import { addGroupExamples, wrapExamples } from './help-examples.ts';
import { polishHelp } from './help-text.ts';
import { addGlobalOptions } from './global-options.ts';
import type { CliIO } from './io.ts';
import { terminalWidth } from './output/terminal-width.ts';
import { escapeControls } from './safe-text.ts';

/** `estate` itself, with its global options and help, before any command is added. */
export function rootCommand(): Command {
  const program = new Command('estate')
    .description('Operations toolkit for a self-run estate of nodes and agents')
    .version(VERSION, '-V, --version', 'print the version number')
    .enablePositionalOptions()
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
  $ estate init
  $ KEY=$(estate keys create --user alice)
  $ estate serve --port 8080 --collect &
  $ estate trends --limit 10 --json
  $ estate nodes
  $ estate events --url http://127.0.0.1:8080 --api-key "$KEY"
`,
    );
  addGlobalOptions(program);
  return program;
}

/**
 * Finishes a tree once its commands are added: group examples, the one voice
 * of `--help` (help-text.ts), and parsing that never exits the process
 * (exitOverride), with output through `io`: help fitted to a terminal's
 * width, its examples wrapped between words.
 */
export function finishTree(program: Command, io: CliIO): Command {
  addGroupExamples(program);
  polishHelp(program);
  // Help on a terminal fits it; elsewhere commander's 80 columns, and an example stays one line.
  const outWidth = io.isTTY ? terminalWidth(io) : undefined;
  const errWidth = io.stderrIsTTY ? terminalWidth(io) : undefined;
  const configure = (cmd: Command) => {
    cmd.exitOverride();
    cmd.configureOutput({
      writeOut: (s) => io.stdout(outWidth === undefined ? s : wrapExamples(s, outWidth)),
      writeErr: (s) => io.stderr(errWidth === undefined ? s : wrapExamples(s, errWidth)),
      ...(outWidth === undefined ? {} : { getOutHelpWidth: () => outWidth }),
      ...(errWidth === undefined ? {} : { getErrHelpWidth: () => errWidth }),
      outputError: (s, write) => write(`estate: ${escapeControls(hideOptionValues(usageLine(cmd, s)))}\n`),
    });
    for (const sub of cmd.commands) configure(sub);
  };
  configure(program);
  return program;
}

/**
 * commander's error message (`error: unknown option '--x'\n(Did you mean
 * --y?)`) as one line without the `error: ` (`unknown option '--x' (did
 * you mean --y?)`). Without a suggestion or a list of choices it says where
 * the usage is: `(see estate trends --help)`.
 *
 * @example
 *   usageLine(trends, "error: too many arguments for 'trends'. Expected 0 arguments but got 1.\n")
 *   // "too many arguments for 'trends'. Expected 0 arguments but got 1 (see estate trends --help)"
 */
export function usageLine(cmd: Command, message: string): string {
  const [first = '', ...notes] = message
    .replace(/^error: /, '')
    .trim()
    .split(/\s*\n\s*/);
  // `unknown command 'feeed'` of `estate work`: `unknown command 'work feeed'`, as `estate help` says it.
  const said = first.replace(/\.$/, '').replace(/^unknown command '/, `$&${commandPath(cmd).split(' ').slice(1).map((w) => `${w} `).join('')}`);
  const suggestion = notes.find((n) => n.startsWith('(Did you mean'));
  if (suggestion) return `${said} (d${suggestion.slice(2)}`;
  if (/Allowed choices are/.test(said)) return said;
  return `${said} (see ${commandPath(cmd)} --help)`;
}

/** `estate work feed` for `estate work feed`. */
function commandPath(cmd: Command): string {
  return cmd.parent ? `${commandPath(cmd.parent)} ${cmd.name()}` : cmd.name();
}

/**
 * commander quotes an unknown option whole (`unknown option '--api-key=…'`):
 * what follows its `=` may be a credential, so it is never echoed.
 */
export function hideOptionValues(message: string): string {
  return message.replace(/(unknown option '[^'=\s]*=)[^\n]*'/g, "$1…'");
}

/**
 * The first word of a command line that is not an option of `program` or an
 * option's value, as commander reads them (`estate --data-dir d trends` →
 * `trends`); undefined when there is none or the line does not parse.
 * `program` parses it again from the state saved here (commander restores
 * it), with its own output and exits set by finishTree.
 */
export function firstCommandWord(program: Command, argv: readonly string[]): string | undefined {
  program.exitOverride();
  program.configureOutput({ writeOut: () => {}, writeErr: () => {}, outputError: () => {} });
  program.saveStateBeforeParse();
  try {
    return program.parseOptions([...argv]).operands[0];
  } catch {
    return undefined;
  }
}
