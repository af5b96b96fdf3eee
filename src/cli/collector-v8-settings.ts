import v8 from 'node:v8';

/**
 * The V8 setting a running `estate collect` (the loop, not `--once`) takes:
 * `--max-opt=0`, every function stays in V8's interpreter and none is
 * compiled by the optimizing compilers. A sample is a few dozen small file
 * reads and appends every `--interval`; the optimizing compilers' code and
 * the memory they work in held 4–5 MiB more resident memory over ten
 * minutes than the interpreter, for no less CPU time (BENCHMARKS.md,
 * "Issue 24: the collector").
 *
 * Set once V8 has started, as src/server/heap-settings.ts does for serve;
 * functions compiled after it stay interpreted. A node run given a
 * setting of its own for the compilers (`execArgv`, `nodeOptions`:
 * NODE_OPTIONS) keeps it. Returns the flags set.
 */
export function keepCollectorLight(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  const given = [...execArgv, nodeOptions ?? ''].join(' ');
  if (/max[-_]opt|jitless|[-_](turbofan|maglev|sparkplug|opt)\b/.test(given)) return [];
  v8.setFlagsFromString('--max-opt=0');
  return ['--max-opt=0'];
}
