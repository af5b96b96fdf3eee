import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT } from './helpers/data-dir.ts';

// `estate serve` keeps V8's young generation at its first size and the old
// generation's growth at 1.6× (src/server/heap-settings.ts); a node run given
// its own settings keeps them. Each case runs in a node process of its own:
// V8 flags last as long as the process.

const MODULE = path.join(ROOT, 'src', 'server', 'heap-settings.ts');

/** In a fresh node (with `nodeOptions`), calls keepHeapSmall when `keep`, makes 200 MB of short-lived garbage and reports the flags set and the young generation's size in MiB. */
function run(keep: boolean, nodeOptions = ''): { set: string[]; newSpaceMb: number } {
  const script = `
    import v8 from 'node:v8';
    const { keepHeapSmall } = await import(${JSON.stringify(MODULE)});
    const set = ${keep} ? keepHeapSmall(process.execArgv, process.env.NODE_OPTIONS) : [];
    let kept = [];
    for (let i = 0; i < 2e6; i++) { kept.push({ i, text: 'x' + i }); if (kept.length > 2000) kept = []; }
    const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    console.log(JSON.stringify({ set, newSpaceMb: young.space_size / 1048576 }));`;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: ROOT,
    env: { ...process.env, NODE_OPTIONS: nodeOptions },
    encoding: 'utf8',
  });
  return JSON.parse(out) as { set: string[]; newSpaceMb: number };
}

test('the young generation keeps its first size under a stream of garbage; without the settings it grows', () => {
  const kept = run(true);
  assert.deepEqual(kept.set, ['--semi-space-growth-factor=1', '--heap-growing-percent=60']);
  const grown = run(false);
  assert.ok(kept.newSpaceMb <= 8, `young generation ${kept.newSpaceMb} MiB with the settings`);
  assert.ok(grown.newSpaceMb > kept.newSpaceMb * 2, `young generation ${grown.newSpaceMb} MiB without them, ${kept.newSpaceMb} MiB with`);
});

test("a node run given its own heap settings keeps them: the matching flag is not set", () => {
  assert.deepEqual(run(true, '--max-semi-space-size=8').set, ['--heap-growing-percent=60']);
  assert.deepEqual(run(true, '--max-old-space-size=512').set, ['--semi-space-growth-factor=1']);
});
