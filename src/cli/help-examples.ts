import type { Command } from 'commander';
import { wrapCommandLine } from './output/wrap-words.ts';

/** The whole `--help` text of a command, as it prints it (with the text added after it). */
export function helpText(cmd: Command): string {
  const saved = cmd.configureOutput();
  let text = '';
  cmd.configureOutput({ ...saved, writeOut: (s) => (text += s), getOutHasColors: () => false });
  try {
    cmd.outputHelp();
  } finally {
    cmd.configureOutput(saved);
  }
  return text;
}

/** The example command lines of a command's help: the `  $ …` lines under `Examples:`. */
export function commandExamples(cmd: Command): string[] {
  const text = helpText(cmd);
  const start = text.indexOf('\nExamples:');
  if (start === -1) return [];
  return [...text.slice(start).matchAll(/^\s+\$ (.+)$/gm)].map((m) => m[1] as string);
}

/**
 * Gives every command group that has no examples of its own (`estate training`)
 * the first example of each of its subcommands, so every `--help` shows one.
 * Worked out when help is shown, so it costs nothing at start-up.
 */
export function addGroupExamples(cmd: Command): void {
  for (const sub of cmd.commands) addGroupExamples(sub);
  if (!cmd.commands.length) return;
  let inside = false;
  cmd.addHelpText('after', () => {
    if (inside) return '';
    inside = true;
    try {
      if (commandExamples(cmd).length) return '';
    } finally {
      inside = false;
    }
    const examples = cmd.commands.flatMap((sub) => commandExamples(sub).slice(0, 1));
    return examples.length ? `\nExamples:\n${examples.map((e) => `  $ ${e}`).join('\n')}` : '';
  });
}

/** Help text with each example line (`  $ estate …`) wider than `width` wrapped between its words (see wrapCommandLine). */
export function wrapExamples(text: string, width: number): string {
  return text.replace(/^ *\$ .*$/gm, (line) => wrapCommandLine(line, width));
}
