import { Command } from 'commander';
import { resolveDataDir } from '../../config.ts';
import { initDataDir } from '../../core/init-data-dir.ts';
import { EstateError } from '../../errors.ts';
import type { CliIO } from '../io.ts';

export function initCommand(io: CliIO): Command {
  return new Command('init')
    .description('Create an empty data dir (existing files are left alone)')
    .argument('[dir]', 'where (default: --data-dir, $ESTATE_DATA_DIR, else $XDG_DATA_HOME/estate)')
    .option('--data-dir <dir>', 'the data directory to create, as DIR')
    .addHelpText('after', '\nExamples:\n  $ estate init /var/lib/estate\n')
    .action(async (dir: string | undefined, options: { dataDir?: string }) => {
      const target = resolveDataDir(dir ?? options.dataDir, io.env);
      try {
        await initDataDir(target);
      } catch (err) {
        throw new EstateError('io', `cannot create data dir ${target}: ${(err as Error).message}`);
      }
      io.stdout(`estate data dir ready at ${target}\n`);
    });
}
