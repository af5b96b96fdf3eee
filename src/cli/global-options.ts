import { Command, Option } from 'commander';
import { EstateError } from '../errors.ts';
import { addCommonOptions } from './common-options.ts';

/**
 * Accepts the common options (addCommonOptions) before the command name too
 * (`estate --data-dir X trends`). The root parses them up to the command
 * name (enablePositionalOptions), and before the command runs they are
 * handed to it: a value given after the command name wins, and an option
 * the command does not take is a usage error (exit 2), never dropped.
 */
export function addGlobalOptions(program: Command): void {
  // The same options, in the same words, as every operation command has.
  for (const o of addCommonOptions(new Command()).options) program.addOption(new Option(o.flags, o.description));
  program.hook('preAction', (root, action) => {
    if (action === root) return;
    for (const [key, value] of Object.entries(root.opts())) {
      // Only what was typed: not the defaults (`--no-headers` makes `headers: true` one).
      if (value === undefined || root.getOptionValueSource(key) !== 'cli') continue;
      const option = action.options.find((o) => o.attributeName() === key);
      if (!option) {
        if (key === 'debug') continue;
        const flag = root.options.find((o) => o.attributeName() === key)?.long ?? key;
        throw new EstateError('usage', `${flag} does not apply to estate ${commandPath(action)}`);
      }
      if (action.getOptionValueSource(key) !== 'cli') action.setOptionValueWithSource(key, value, 'cli');
    }
  });
}

function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}
