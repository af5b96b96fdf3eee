import type { TestContext } from 'node:test';

// Tests that need a program this machine may lack (zsh, fish, script(1),
// unshare, man) skip without it and say why, except in CI (`CI` or
// `ESTATE_REQUIRE_TOOLS` set, as .ci/run does after installing them), where
// a missing tool fails the test instead of hiding it.

/** Whether every such test must run: `CI` or `ESTATE_REQUIRE_TOOLS` is set. */
export const TOOLS_REQUIRED = Boolean(process.env.CI || process.env.ESTATE_REQUIRE_TOOLS);

/**
 * Stops a test that cannot run here: `missing` says what is missing and how
 * to install it (false when nothing is). Returns true after marking the test
 * skipped (the caller returns); in CI throws instead, so the test fails.
 *
 * @example
 *   if (skipWithout(t, HAS_SCRIPT ? false : 'script(1) is not installed (apt-get install bsdutils)')) return;
 */
export function skipWithout(t: Pick<TestContext, 'skip'>, missing: string | false): boolean {
  if (!missing) return false;
  if (TOOLS_REQUIRED) throw new Error(`${missing}, and CI must run this test (CI or ESTATE_REQUIRE_TOOLS is set)`);
  t.skip(`${missing}; CI runs this test`);
  return true;
}
