import { Command } from 'commander';
import { dataDirOption, resolveDataDir } from '../../config.ts';
import { initDataDir } from '../../core/init-data-dir.ts';
import { EstateError } from '../../errors.ts';
import { shellWord } from '../../shell-word.ts';
import type { CliIO } from '../io.ts';

export function initCommand(io: CliIO): Command {
  return new Command('init')
    .description('Create an empty data dir (existing files are left alone); with no DIR, the one commands use by default')
    .argument('[dir]', 'where (default: --data-dir, $ESTATE_DATA_DIR, else $XDG_DATA_HOME/estate)')
    .option('--data-dir <dir>', 'the data directory to create, as DIR')
    .addHelpText(
      'after',
      '\nWith no DIR it makes the data dir commands use when none is named:\n' +
        '$ESTATE_DATA_DIR if set, else $XDG_DATA_HOME/estate (~/.local/share/estate).\n' +
        'Commands use another DIR when given --data-dir DIR, or with\n' +
        'ESTATE_DATA_DIR=DIR exported.\n' +
        '\nExamples:\n  $ estate init\n  $ estate init ~/lab && estate keys create --user alice --data-dir ~/lab\n',
    )
    .action(async (dir: string | undefined, options: { dataDir?: string }) => {
      const target = resolveDataDir(dir ?? options.dataDir, io.env);
      try {
        await initDataDir(target);
      } catch (err) {
        throw new EstateError('io', `cannot create data dir ${target}: ${(err as Error).message}`);
      }
      io.stdout(`estate data dir ready at ${target}\n${nextSteps(target, io.env)}`);
    });
}

/**
 * What to run next, with --data-dir where the commands need it to find
 * `dir`: a data dir other than the default is used only where it is named.
 */
function nextSteps(dir: string, env: NodeJS.ProcessEnv): string {
  const option = dataDirOption(dir, env);
  const next = `next: estate keys create --user NAME${option} (an API key), then estate serve${option}\n`;
  if (!option) return next;
  const word = shellWord(dir);
  return `commands use ${resolveDataDir(undefined, env)} when none is named: they use this one when given --data-dir ${word}, or with ESTATE_DATA_DIR=${word} exported\n${next}`;
}
