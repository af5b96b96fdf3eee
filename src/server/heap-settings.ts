import v8 from 'node:v8';

/**
 * The V8 heap settings `estate serve` runs with, for a server whose
 * requests make small, short-lived garbage and whose index lives outside
 * the V8 heap (typed arrays): what V8 grows under load by default held
 * 30–40 MiB more resident memory after every busy spell (BENCHMARKS.md,
 * "Server memory after load").
 *
 * - `--semi-space-growth-factor=1`: the young generation keeps the size it
 *   has when the server starts (semi-spaces of 1–4 MiB) instead of growing
 *   to two of 16 MiB;
 * - `--heap-growing-percent=60`: the old generation may grow to 1.6× what
 *   the last full collection kept before the next one, where V8 allows up
 *   to 4× while allocation is fast.
 *
 * Only these can still be set once V8 has started (`--max-semi-space-size`
 * and `--max-old-space-size` are read at start-up only). A node run given a
 * setting of its own for either generation (`execArgv`, `nodeOptions`:
 * NODE_OPTIONS) keeps it: then the matching flag is left alone. Returns the
 * flags set.
 */
export function keepHeapSmall(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  const given = [...execArgv, nodeOptions ?? ''].join(' ');
  const set: string[] = [];
  if (!/semi[-_]space/.test(given)) set.push('--semi-space-growth-factor=1');
  if (!/heap[-_]growing|old[-_]space|max[-_]heap/.test(given)) set.push('--heap-growing-percent=60');
  for (const flag of set) v8.setFlagsFromString(flag);
  return set;
}
