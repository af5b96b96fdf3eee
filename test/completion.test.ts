import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import { commandTree } from '../src/cli/command-tree.ts';
import { buildProgram } from '../src/cli/program.ts';
import { BIN, runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { skipWithout } from './helpers/required-tool.ts';

// `estate completion bash|zsh|fish` prints a script generated from the
// command tree; the scripts are run in the real shells: they complete
// subcommands at any depth, options, option values, and state file names
// that they ask `estate __complete state-files` for (the data dir's state
// folder, from --data-dir or ESTATE_DATA_DIR).

const io = { env: {}, stdout: () => {}, stderr: () => {}, isTTY: false, onStop: () => new Promise<string>(() => {}) };
const has = (shell: string) => spawnSync('sh', ['-c', `command -v ${shell}`]).status === 0;

/** A folder with an `estate` command (the real binary) to put first on PATH, and the script of `shell` written in it. */
async function setup(t: TestContext, shell: string): Promise<{ folder: string; script: string; env: Record<string, string> }> {
  const folder = await mkdtemp(path.join(os.tmpdir(), 'estate-completion-'));
  t.after(() => rm(folder, { recursive: true, force: true }));
  await writeFile(path.join(folder, 'estate'), `#!/bin/sh\nexec '${process.execPath}' '${BIN}' "$@"\n`);
  await chmod(path.join(folder, 'estate'), 0o755);
  const r = await runEstate(['completion', shell]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  const script = path.join(folder, `estate.${shell}`);
  await writeFile(script, r.stdout);
  return { folder, script, env: { PATH: `${folder}:${process.env.PATH ?? ''}`, HOME: folder } };
}

/** Runs `code` in `shell`; stdout, failing the test on a non-zero exit. */
function run(shell: string, args: string[], code: string, env: Record<string, string>): string {
  const r = spawnSync(shell, [...args, '-c', code], { env, encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, `${shell}: ${r.stderr}`);
  return r.stdout;
}

/** A data dir whose state folder holds only heartbeat.json. */
async function heartbeatOnly(t: TestContext): Promise<string> {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'state', 'heartbeat.json'), '{"ok": true}\n');
  return dir;
}

/** Every command of the tree as [parent words, name]: `['work', 'complete']` is ['work', 'complete']. */
function treePairs(): [string, string][] {
  return commandTree(buildProgram(io)).map(({ name }): [string, string] => {
    const words = name.split(' ').slice(1);
    return [words.slice(0, -1).join(' '), words.at(-1) as string];
  });
}

const BASH_HELPER = `
c() { COMP_WORDS=("$@"); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _estate_completion_fn; printf '%s\\n' "\${COMPREPLY[*]}"; }
`;

test('bash: the script completes commands, nested subcommands, options, option values and state file names', async (t) => {
  const { script, env } = await setup(t, 'bash');
  const dir = await heartbeatOnly(t);
  const cases: [string[], string][] = [
    [['estate', 'wo'], 'work'],
    [['estate', 'work', 'co'], 'complete'],
    [['estate', 'publish', 'la'], 'latest'],
    [['estate', 'trends', ''], 'latest range'],
    [['estate', 'work', 'complete', '--ti'], '--title'],
    [['estate', 'work', 'complete', '--board', 'ops', '--ass'], '--assignee'],
    [['estate', 'serve', '--log-format', ''], 'json text'],
    [['estate', 'completion', ''], 'bash zsh fish'],
    // State file names: every name without a data dir, the present ones with one.
    [['estate', 'state', ''], 'scoreboard heartbeat estate_map'],
    [['estate', 'state', '--data-dir', dir, ''], 'heartbeat'],
    [['estate', 'state', '--data-dir', dir, 'he'], 'heartbeat'],
    [['estate', 'state', 'heartbeat', ''], ''],
  ];
  const code = [`source '${script}'`, BASH_HELPER, ...cases.map(([words]) => `c ${words.map((w) => `'${w}'`).join(' ')}`)].join('\n');
  const lines = run('bash', ['--norc', '--noprofile'], code, env).split('\n');
  cases.forEach(([words, expected], i) => assert.equal(lines[i], expected, words.join(' ')));

  // ESTATE_DATA_DIR is the data dir when --data-dir is not given.
  const fromEnv = run('bash', ['--norc', '--noprofile'], `source '${script}'\n${BASH_HELPER}\nc estate state ''`, { ...env, ESTATE_DATA_DIR: dir });
  assert.equal(fromEnv, 'heartbeat\n');
});

test('bash: every command of the tree is offered under its parent', async (t) => {
  const { script, env } = await setup(t, 'bash');
  const pairs = treePairs();
  assert.ok(pairs.length > 30, `${pairs.length} commands`);
  const code = [`source '${script}'`, BASH_HELPER, ...pairs.map(([parent]) => `c estate ${parent} ''`)].join('\n');
  const lines = run('bash', ['--norc', '--noprofile'], code, env).split('\n');
  pairs.forEach(([parent, name], i) => assert.ok((lines[i] ?? '').split(' ').includes(name), `estate ${parent} <TAB> offers ${name}: ${lines[i]}`));
});

test('zsh: the script parses, and its completion function offers commands, options and state file names', async (t) => {
  if (skipWithout(t, !has('zsh') && 'zsh is not installed (apt-get install zsh)')) return;
  const { script, env, folder } = await setup(t, 'zsh');
  run('zsh', ['-n'], `source '${script}'`, env);
  const dir = await heartbeatOnly(t);
  // compinit's helpers stand in for the completion system: they print what would be offered.
  const code = `
autoload -Uz compinit && compinit -u -d '${folder}/zcompdump'
source '${script}'
_describe() { print -r -- "\${(j: :)\${(@)\${(@P)\${@[-1]}}%%:*}}"; }
compadd() { shift; print -r -- "$*"; }
compset() { :; }
c() { words=("$@"); CURRENT=$#words; _estate; }
c estate wo
c estate work ''
c estate work complete --b
c estate serve --log-format ''
c estate state --data-dir '${dir}' ''
`;
  const lines = run('zsh', ['-f'], code, env).trim().split('\n');
  assert.ok(lines[0]?.split(' ').includes('work'), lines[0]);
  assert.equal(lines[1], 'start complete feed');
  assert.ok(lines[2]?.split(' ').includes('--board'), lines[2]);
  assert.equal(lines[3], 'json text');
  assert.equal(lines[4], 'heartbeat');
});

test('fish: the script parses, and `complete -C` completes commands, options and state file names', async (t) => {
  if (skipWithout(t, !has('fish') && 'fish is not installed (apt-get install fish)')) return;
  const { script, env } = await setup(t, 'fish');
  run('fish', ['--no-config', '-n'], `source '${script}'`, env);
  const dir = await heartbeatOnly(t);
  const lines = ['estate wo', 'estate work co', 'estate work complete --ti', 'estate serve --log-format ', `estate state --data-dir ${dir} `, 'estate state '];
  const code = [`source '${script}'`, ...lines.map((l) => `echo (complete -C'${l}' | cut -f1 | sort | string join ' ')`)].join('\n');
  const out = run('fish', ['--no-config'], code, env).split('\n');
  assert.deepEqual(out.slice(0, lines.length), ['work', 'complete', '--title', 'json text', 'heartbeat', 'estate_map heartbeat scoreboard']);
});

test('zsh and fish scripts name every command of the tree', async () => {
  const pairs = treePairs();
  for (const shell of ['zsh', 'fish']) {
    const r = await runEstate(['completion', shell]);
    assert.equal(r.code, 0, r.stderr);
    for (const [, name] of pairs) assert.ok(r.stdout.includes(`'${name}`), `${shell}: ${name}`);
  }
});

test('estate __complete state-files lists the present state files, and every name without a data dir', async (t) => {
  const dir = await heartbeatOnly(t);
  assert.deepEqual(await runEstate(['__complete', 'state-files', '--data-dir', dir]).then((r) => [r.code, r.stdout]), [0, 'heartbeat\n']);
  const missing = path.join(dir, 'nope');
  assert.deepEqual(await runEstate(['__complete', 'state-files', '--data-dir', missing]).then((r) => [r.code, r.stdout]), [0, 'scoreboard\nheartbeat\nestate_map\n']);
  const help = await runEstate(['--help']);
  assert.ok(!help.stdout.includes('__complete'), 'hidden from --help');
});

test('estate completion with an unknown shell is a usage error', async () => {
  const r = await runEstate(['completion', 'tcsh']);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^estate: .*'tcsh'.*bash, zsh, fish/);
});
