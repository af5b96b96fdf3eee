import assert from 'node:assert/strict';
import { test } from 'node:test';
import { helpText } from '../src/cli/help-examples.ts';
import { commandTree } from '../src/cli/man-page.ts';
import { buildProgram } from '../src/cli/program.ts';
import { runEstate } from './helpers/cli.ts';

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
