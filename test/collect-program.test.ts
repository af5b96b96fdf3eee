import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { buildCollectProgram } from '../src/cli/collect-program.ts';
import { commandTree } from '../src/cli/command-tree.ts';
import { helpText } from '../src/cli/help-examples.ts';
import { buildProgram } from '../src/cli/program.ts';
import { runEstate } from './helpers/cli.ts';
import { ROOT } from './helpers/data-dir.ts';

// `estate collect` builds only its own command (src/cli/collect-program.ts),
// and the loop keeps V8's optimizing compilers off
// (src/cli/collector-v8-settings.ts): a collector runs for months, and both
// keep its resident memory down (BENCHMARKS.md, "Issue 24: the collector").

const io = { env: {}, stdout: () => {}, stderr: () => {}, isTTY: false, onStop: () => new Promise<string>(() => {}) };
const collectOf = (program: ReturnType<typeof buildProgram>) => commandTree(program).filter((e) => e.name.split(' ')[1] === 'collect');

test('the collect command built alone is the whole tree\'s, and the real binary prints its help', async () => {
  const own = collectOf(buildCollectProgram(io));
  const whole = collectOf(buildProgram(io));
  assert.deepEqual(own.map((e) => e.name), ['estate collect']);
  assert.equal(helpText(own[0]!.cmd), helpText(whole[0]!.cmd));
  const r = await runEstate(['collect', '--help']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, helpText(whole[0]!.cmd));
});

test('a bad option of collect is still one line and exit 2', async () => {
  const r = await runEstate(['collect', '--no-such-option']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^estate: unknown option '--no-such-option'.*\n$/);
});

const MODULE = path.join(ROOT, 'src', 'cli', 'collector-v8-settings.ts');

/** In a fresh node (given `flags`), calls keepCollectorLight when `keep`, runs a hot function and reports the flags set and whether V8 optimized it. */
function run(keep: boolean, flags: string[] = []): { set: string[]; optimized: boolean } {
  const script = `
    const { keepCollectorLight } = await import(${JSON.stringify(MODULE)});
    const set = ${keep} ? keepCollectorLight(process.execArgv, process.env.NODE_OPTIONS) : [];
    const hot = new Function('a', 'b', 'return a * b + 1;');
    let sum = 0;
    for (let i = 0; i < 2e6; i++) sum += hot(i, 2);
    // kOptimized (1 << 4) of V8's runtime function %GetOptimizationStatus.
    const status = new Function('f', 'return %GetOptimizationStatus(f);')(hot);
    console.log(JSON.stringify({ set, optimized: (status & 16) !== 0, sum: sum > 0 }));`;
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--no-concurrent-recompilation', ...flags, '--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return JSON.parse(out) as { set: string[]; optimized: boolean };
}

test('the running collector keeps every function in the interpreter; without the setting a hot one is optimized', () => {
  const light = run(true);
  assert.deepEqual(light.set, ['--max-opt=0']);
  assert.equal(light.optimized, false);
  assert.equal(run(false).optimized, true);
});

test('a node run given its own compiler settings keeps them', () => {
  assert.deepEqual(run(true, ['--max-opt=2']).set, []);
  assert.deepEqual(run(true, ['--no-opt']).set, []);
});
