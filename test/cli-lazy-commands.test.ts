import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { commandTree } from '../src/cli/command-tree.ts';
import { helpText } from '../src/cli/help-examples.ts';
import { OPERATION_COMMANDS } from '../src/cli/operation-manifest.ts';
import { buildOperationProgram } from '../src/cli/operation-program.ts';
import { buildProgram } from '../src/cli/program.ts';
import { runEstate } from './helpers/cli.ts';
import { DEMO_FIXTURE, tempDataDir } from './helpers/data-dir.ts';

// A command line that runs an operation builds only the commands of its
// group, from the manifest the build worked out (src/cli/operation-manifest.ts),
// and only its own operation's schemas. What it builds must be exactly what
// the whole tree has.

const io = { env: {}, stdout: () => {}, stderr: () => {}, isTTY: false, onStop: () => new Promise<string>(() => {}) };
const GROUPS = [...new Set(OPERATION_COMMANDS.map((c) => c.words[0] as string))];
const inGroup = (group: string) => (e: { name: string }) => e.name.split(' ')[1] === group;

test('the commands built for one group are the whole tree\'s, help text for help text', () => {
  const full = buildProgram(io);
  assert.ok(GROUPS.length > 15, GROUPS.join(' '));
  for (const group of GROUPS) {
    const own = commandTree(buildOperationProgram(io, group)).filter(inGroup(group));
    const whole = commandTree(full).filter(inGroup(group));
    assert.deepEqual(
      own.map((e) => e.name),
      whole.map((e) => e.name),
      group,
    );
    own.forEach((e, i) => assert.equal(helpText(e.cmd), helpText((whole[i] as (typeof whole)[number]).cmd), e.name));
  }
});

test('the real binary prints the same --help for every operation command as the tree built from the operations table', async () => {
  const full = buildProgram(io);
  const commands = commandTree(full).filter((e) => GROUPS.some((g) => inGroup(g)(e)));
  assert.ok(commands.length > 30, `${commands.length} operation commands`);
  const helps = await Promise.all(commands.map(({ name }) => runEstate([...name.split(' ').slice(1), '--help'])));
  commands.forEach(({ name, cmd }, i) => {
    const r = helps[i] as (typeof helps)[number];
    assert.equal(r.code, 0, `${name} --help: ${r.stderr}`);
    assert.equal(r.stdout, helpText(cmd), name);
  });
});

test('a command builds the schemas of its own operation only; estate openapi builds them all', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  // Lists, at exit, the ids of the named schemas built (zod's global registry
  // holds every schema given `.meta({ id })`; `_idmap` is zod's own map of them).
  const preload = path.join(path.dirname(dir), 'schema-ids.cjs');
  await writeFile(
    preload,
    "process.on('exit', () => { const ids = globalThis.__zod_globalRegistry?._idmap; process.stderr.write(`schema ids: ${ids ? [...ids.keys()].sort().join(' ') : 'unknown'}\\n`); });\n",
  );
  const idsOf = async (args: string[]) => {
    const r = await runEstate(args, { env: { NODE_OPTIONS: `--require ${preload}` } });
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    const line = /^schema ids: (.*)$/m.exec(r.stderr)?.[1];
    assert.ok(line !== undefined && line !== 'unknown', `zod's global registry was not found: ${r.stderr}`);
    return line.split(' ').filter(Boolean);
  };
  const all = await idsOf(['openapi']);
  for (const id of ['TrendPoint', 'TrendPointPage', 'WorkCompletion', 'WorkCompletionPage', 'Summary', 'TrainingRun']) assert.ok(all.includes(id), `openapi builds ${id}`);
  assert.deepEqual(await idsOf(['trends', '--limit', '1', '--json', '--data-dir', dir]), ['TrendPoint', 'TrendPointPage']);
  assert.deepEqual(await idsOf(['work', 'feed', '--limit', '1', '--json', '--data-dir', dir]), ['WorkCompletion', 'WorkCompletionPage']);
  assert.deepEqual(await idsOf(['--help']), []);
});

test("a read of every node's newest records loads neither the series index nor the locks (their node:crypto and node:perf_hooks); a read of one node does", async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const preload = path.join(path.dirname(dir), 'builtins.cjs');
  await writeFile(preload, "process.on('exit', () => { process.stderr.write(`builtins: ${process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13)).join(' ')}\\n`); });\n");
  const builtins = async (args: string[]) => {
    const r = await runEstate(args, { env: { NODE_OPTIONS: `--require ${preload}` } });
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    return (/^builtins: (.*)$/m.exec(r.stderr)?.[1] ?? '').split(' ');
  };
  const plain = await builtins(['trends', '--limit', '1', '--json', '--data-dir', dir]);
  assert.ok(plain.includes('fs'), `the preload saw the builtins: ${plain.join(' ')}`);
  for (const m of ['crypto', 'perf_hooks']) assert.ok(!plain.includes(m), `estate trends loaded ${m}`);
  const one = await builtins(['trends', '--node', 'hub', '--limit', '1', '--json', '--data-dir', dir]);
  assert.ok(one.includes('crypto'), `a read of one node goes through the index: ${one.join(' ')}`);
});
