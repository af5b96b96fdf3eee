import type { Command } from 'commander';
import { EstateError } from '../errors.ts';

/** The common options, also accepted before the command (`estate --data-dir X trends`). */
const GLOBAL_OPTIONS: readonly [flags: string, description: string][] = [
  ['--data-dir <dir>', 'the data directory, for the commands that read one'],
  ['--config <file>', 'the config file, for the commands that read one'],
  ['--url <url>', 'call this estate server instead of the local data dir'],
  ['--api-key <key>', 'credential for the server'],
  ['--context <name>', 'call the server of this context (see estate context)'],
  ['--json', 'print JSON'],
  ['--debug', 'print stack traces of errors'],
];

/**
 * Accepts the common options before the command name too. The root parses
 * them up to the command name (enablePositionalOptions), and before the
 * command runs they are handed to it: a value given after the command name
 * wins, and an option the command does not take is a usage error (exit 2)
 * rather than silently dropped.
 */
export function addGlobalOptions(program: Command): void {
  for (const [flags, description] of GLOBAL_OPTIONS) program.option(flags, description);
  program.hook('preAction', (root, action) => {
    if (action === root) return;
    for (const [key, value] of Object.entries(root.opts())) {
      if (value === undefined) continue;
      const option = action.options.find((o) => o.attributeName() === key);
      if (!option) {
        if (key === 'debug') continue;
        const flag = root.options.find((o) => o.attributeName() === key)?.long ?? key;
        throw new EstateError('usage', `${flag} does not apply to estate ${commandPath(action)}`);
      }
      if (action.getOptionValue(key) === undefined) action.setOptionValueWithSource(key, value, 'cli');
    }
  });
}

function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}
