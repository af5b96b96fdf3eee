import { rename, writeFile } from 'node:fs/promises';
import { Command } from 'commander';
import { EstateError } from '../../errors.ts';
import type { CliIO } from '../io.ts';

/** `estate man`: the man page of the command tree, in troff (`npm run man` writes it to man/estate.1). */
export function manCommand(io: CliIO, program: () => Command): Command {
  return new Command('man')
    .description('Print the man page (troff) of this command tree')
    .option('-o, --output <file>', 'write it to FILE (replaced whole, only once the page is rendered)')
    .addHelpText('after', '\nExamples:\n  $ estate man | man -l -\n  $ estate man --output man/estate.1\n')
    .action(async (options: { output?: string }) => {
      const { renderManPage } = await import('../man-page.ts');
      const text = renderManPage(program());
      if (!options.output) return io.stdout(text);
      const temp = `${options.output}.${process.pid}.tmp`;
      try {
        await writeFile(temp, text);
        await rename(temp, options.output);
      } catch (err) {
        throw new EstateError('io', `cannot write ${options.output}: ${(err as Error).message}`, { cause: err });
      }
    });
}
