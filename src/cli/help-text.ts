import { Command, type Option } from 'commander';
import { EstateError } from '../errors.ts';

// One voice for `--help`, applied to the whole tree once it is built:
// every group says what it is for, option and argument descriptions are
// sentences without a final period, required options say "(required)" and a
// command missing several names them all, and `estate help NAME` refuses a
// command that does not exist.

/** Groups that are no operation themselves, only hold them (`estate work complete`). */
const GROUP_DESCRIPTIONS: Readonly<Record<string, string>> = {
  work: 'Record kanban task completions (and the starts of runs) and read the work feed',
  publish: 'Register published pieces and look them up by site, type or id',
  training: 'Start, list, show and delete training runs of a user',
  forge: 'Repositories and issues of the configured forge',
  notify: 'Webhooks: send a test event to a notify target, and list recent deliveries',
};

export const HELP_OPTION_TEXT = 'Show help for the command';
const REQUIRED = ' (required)';

/** Sentence case, no final period: `how many points (1–1000). (default: 100)` → `How many points (1–1000) (default: 100)`. */
export function sentence(text: string): string {
  const t = text
    .trim()
    .replace(/\.(\s+\((?:default|required)\b[^)]*\))$/, '$1')
    .replace(/(?<!\.)\.$/, '');
  return t.charAt(0).toUpperCase() + t.slice(1);
}

/**
 * Applies the conventions above to `program` and every command under it.
 * Commander's own check of mandatory options (one at a time) is replaced by
 * one that names every missing option: "missing --assignee, --title" (exit 2).
 */
export function polishHelp(program: Command): void {
  const required = new WeakSet<Option>();
  const walk = (cmd: Command) => {
    const subs = cmd.commands.filter((sub) => sub.name() !== 'help');
    if (!cmd.description() && GROUP_DESCRIPTIONS[cmd.name()] && cmd.parent === program) cmd.description(GROUP_DESCRIPTIONS[cmd.name()] as string);
    cmd.helpOption('-h, --help', HELP_OPTION_TEXT);
    if (subs.length && !cmd.commands.some((sub) => sub.name() === 'help')) {
      cmd.helpCommand(false);
      cmd.addCommand(helpCommand(cmd));
    }
    for (const option of cmd.options) {
      option.description = sentence(option.description);
      if (option.mandatory) {
        option.mandatory = false;
        required.add(option);
        if (!option.description.endsWith(REQUIRED)) option.description += REQUIRED;
      }
    }
    for (const argument of cmd.registeredArguments) argument.description = argument.description && sentence(argument.description);
    for (const sub of subs) walk(sub);
  };
  walk(program);
  program.hook('preAction', (_program, action) => {
    const missing = action.options.filter((o) => required.has(o) && action.getOptionValue(o.attributeName()) === undefined);
    if (missing.length) throw new EstateError('usage', `missing ${missing.map((o) => o.long ?? o.short).join(', ')}`);
  });
}

/** `help [command...]` of `parent`: the help of that command, or a usage error naming what does not exist. */
function helpCommand(parent: Command): Command {
  return new Command('help')
    .description('Show help for a command')
    .argument('[command...]', 'The command, with its subcommands: `work complete`')
    .helpOption(false)
    .action((names: string[]) => {
      let target = parent;
      for (const [i, name] of names.entries()) {
        const sub = target.commands.find((c) => c.name() === name || c.aliases().includes(name));
        if (!sub) throw new EstateError('usage', `unknown command '${names.slice(0, i + 1).join(' ')}' (see ${[...pathOf(parent), ...names.slice(0, i)].join(' ')} --help)`);
        target = sub;
      }
      target.help();
    });
}

/** `['estate', 'work']` for `estate work`. */
function pathOf(cmd: Command): string[] {
  return cmd.parent ? [...pathOf(cmd.parent), cmd.name()] : [cmd.name()];
}
