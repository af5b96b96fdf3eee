import { Help, type Command } from 'commander';

// The one walk of the commander tree that the man page, shell completion and
// the help tests share: what `--help` shows is what they describe.

export interface TreeEntry {
  /** `estate trends latest`. */
  name: string;
  cmd: Command;
}

/** Every visible command under `cmd`, depth first, in help order (the `help` command left out). */
export function commandTree(cmd: Command, prefix = cmd.name()): TreeEntry[] {
  const help = new Help();
  return help
    .visibleCommands(cmd)
    .filter((sub) => sub.name() !== 'help')
    .flatMap((sub) => {
      const name = `${prefix} ${sub.name()}`;
      return [{ name, cmd: sub }, ...commandTree(sub, name)];
    });
}

export interface OptionShape {
  /** `--output`, or undefined for a short-only option. */
  long: string | undefined;
  /** `-o`. */
  short: string | undefined;
  description: string;
  /** The placeholder of an option that takes a value (`dir` of `--data-dir <dir>`), else undefined. */
  value: string | undefined;
  /** The values an option accepts, when it lists them. */
  choices: readonly string[] | undefined;
}

export interface ArgumentShape {
  name: string;
  description: string;
  required: boolean;
  /** The values it accepts, when it lists them. */
  choices: readonly string[] | undefined;
}

export interface CommandShape {
  /** The words after the program name: `[]` for the program, `['work', 'complete']`. */
  words: string[];
  description: string;
  subcommands: { name: string; description: string }[];
  /** Visible options, `--help` included. */
  options: OptionShape[];
  arguments: ArgumentShape[];
}

/** The program and every visible command under it (commandTree), as plain data: what completion needs. */
export function describeCommandTree(program: Command): CommandShape[] {
  const help = new Help();
  const root = program.name();
  const shape = (cmd: Command, name: string): CommandShape => ({
    words: name === root ? [] : name.slice(root.length + 1).split(' '),
    description: cmd.description(),
    subcommands: help
      .visibleCommands(cmd)
      .filter((sub) => sub.name() !== 'help')
      .map((sub) => ({ name: sub.name(), description: sub.description() })),
    options: help.visibleOptions(cmd).map((o) => ({
      long: o.long,
      short: o.short,
      description: o.description,
      value: o.required || o.optional ? (/[<[]([^>\]]+)[>\]]/.exec(o.flags)?.[1] ?? 'value') : undefined,
      choices: o.argChoices,
    })),
    arguments: help.visibleArguments(cmd).map((a) => ({ name: a.name(), description: a.description, required: a.required, choices: a.argChoices })),
  });
  return [shape(program, root), ...commandTree(program).map(({ name, cmd }) => shape(cmd, name))];
}
