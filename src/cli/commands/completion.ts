import { readdir } from 'node:fs/promises';
import { Argument, Command } from 'commander';
import { resolveDataDir } from '../../config.ts';
import { dataPath } from '../../core/data-files.ts';
import { STATE_FILES } from '../../core/state-files.ts';
import { DATA_DIR_OPTION_TEXT } from '../common-options.ts';
import type { CliIO } from '../io.ts';

/** `estate completion bash|zsh|fish`: the completion script of this command tree, to source. */
export function completionCommand(io: CliIO, program: () => Command): Command {
  return new Command('completion')
    .description('Print a shell completion script (commands, options, state file names) to source')
    .addArgument(new Argument('<shell>', 'The shell to complete in').choices(['bash', 'zsh', 'fish']))
    .addHelpText(
      'after',
      `
Examples:
  $ source <(estate completion bash)
  $ estate completion zsh > "\${fpath[1]}/_estate"
  $ estate completion fish > ~/.config/fish/completions/estate.fish
`,
    )
    .action(async (shell: 'bash' | 'zsh' | 'fish') => {
      const [{ completionScript }, { describeCommandTree }] = await Promise.all([import('../completion.ts'), import('../command-tree.ts')]);
      const root = program();
      io.stdout(completionScript(shell, describeCommandTree(root), root.name()));
    });
}

/**
 * `estate __complete SOURCE` (hidden): the values a completion script offers
 * for an argument, one a line. `state-files`: the state files present in the
 * state folder of the data dir (--data-dir, else $ESTATE_DATA_DIR, else the
 * default), or every state file name when that folder cannot be read. Never
 * fails: completion must not print errors into a command line.
 */
export function completeValuesCommand(io: CliIO): Command {
  return new Command('__complete')
    .description('List the values shell completion offers for SOURCE (state-files)')
    .argument('<source>', 'What to list: state-files')
    .option('--data-dir <dir>', DATA_DIR_OPTION_TEXT)
    .action(async (source: string, options: { dataDir?: string }) => {
      if (source !== 'state-files') return;
      let names: string[] = [...STATE_FILES];
      try {
        const entries = await readdir(dataPath(resolveDataDir(options.dataDir, io.env), 'state'), { withFileTypes: true });
        const present = entries.filter((e) => e.isFile() && e.name.endsWith('.json')).map((e) => e.name.slice(0, -'.json'.length));
        names = STATE_FILES.filter((name) => present.includes(name));
      } catch {
        // No data dir (or no state folder): the names estate knows.
      }
      io.stdout(names.map((n) => `${n}\n`).join(''));
    });
}
