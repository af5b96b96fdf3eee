import assert from 'node:assert/strict';
import { test } from 'node:test';
import { helpText } from '../src/cli/help-examples.ts';
import { commandTree } from '../src/cli/man-page.ts';
import { buildProgram } from '../src/cli/program.ts';
import { runEstate } from './helpers/cli.ts';
import { skipWithout } from './helpers/required-tool.ts';
import { NO_TERMINAL, runEstateInTerminal } from './helpers/terminal.ts';

// Every command's --help ends with at least one example of that command.

const io = { env: {}, stdout: () => {}, stderr: () => {}, isTTY: false, onStop: () => new Promise<string>(() => {}) };

/** The `  $ …` lines under `Examples:` of a help text. */
function examplesOf(text: string): string[] {
  const at = text.indexOf('\nExamples:\n');
  return at === -1 ? [] : [...text.slice(at).matchAll(/^ {2}\$ (.+)$/gm)].map((m) => m[1] as string);
}

test('every command of the tree shows examples of itself in --help', () => {
  const program = buildProgram(io);
  const tree = [{ name: 'estate', cmd: program }, ...commandTree(program)];
  assert.ok(tree.length > 20, `the tree has ${tree.length} commands`);
  for (const { name, cmd } of tree) {
    const text = helpText(cmd);
    assert.match(text, new RegExp(`^Usage: ${name}\\b`), `${name} --help`);
    const examples = examplesOf(text);
    assert.ok(examples.length > 0, `${name} --help has no Examples: section with a "$ …" line`);
    assert.ok(examples.some((e) => e.includes(name)), `${name} --help: no example runs "${name}": ${examples.join(' | ')}`);
  }
});

test('the real binary prints the same examples (a leaf, a group, and the program)', async () => {
  const program = buildProgram(io);
  for (const name of ['estate', 'estate keys', 'estate trends latest', 'estate openapi']) {
    const r = await runEstate([...name.split(' ').slice(1), '--help']);
    assert.equal(r.code, 0, r.stderr);
    const cmd = name === 'estate' ? program : commandTree(program).find((e) => e.name === name)?.cmd;
    assert.ok(cmd, name);
    assert.deepEqual(examplesOf(r.stdout), examplesOf(helpText(cmd)), name);
    assert.ok(examplesOf(r.stdout).length > 0, name);
  }
});

test('on an 80-column terminal, long examples wrap between words, with ` \\` and an indent under the `$`, and read back the same', async (t) => {
  if (skipWithout(t, NO_TERMINAL)) return;
  const commands = [[], ['work'], ['work', 'complete'], ['token', 'create'], ['migrate'], ['context', 'set']];
  const [piped, onTerminal] = await Promise.all([
    Promise.all(commands.map((c) => runEstate([...c, '--help']))),
    Promise.all(commands.map((c) => runEstateInTerminal([...c, '--help'], { env: { COLUMNS: '80', NO_COLOR: '1' } }))),
  ]);
  let wrapped = 0;
  commands.forEach((c, i) => {
    const name = ['estate', ...c].join(' ');
    const pipe = piped[i] as (typeof piped)[number];
    const tty = onTerminal[i] as (typeof onTerminal)[number];
    assert.equal(tty.code, 0, tty.output);
    const lines = tty.output.split('\n');
    for (const line of lines) assert.ok(line.length <= 80, `${name}: ${JSON.stringify(line)} is ${line.length} wide`);
    lines.forEach((line, k) => {
      if (!(lines[k - 1] ?? '').endsWith(' \\')) return;
      wrapped++;
      assert.match(line, /^ {6}\S/, `${name}: ${JSON.stringify(line)} continues an example, indented under the command`);
    });
    // Joined again, the examples are those of the help in a pipe, where each is one line.
    assert.deepEqual(examplesOf(tty.output.replace(/ \\\n {6}/g, ' ')), examplesOf(pipe.stdout), name);
  });
  assert.ok(wrapped >= 4, `${wrapped} examples wrapped`);
});
