/**
 * How long a test waits for something that must happen (an answer, an exit,
 * an event) before it calls it a failure. Only a bound on a failing test,
 * never what a test waits for: CI machines are as busy as two copies of the
 * suite on two cores, where a child process can take seconds to start.
 */
export const PATIENCE_MS = 60_000;

/**
 * Polls `check` until it returns true, failing with `what` after `timeoutMs`.
 * For effects that land "soon" (a watcher event, a background write) without
 * asserting on wall-clock speed: the timeout is generous on purpose.
 */
export async function waitUntil(what: string, check: () => boolean | Promise<boolean>, timeoutMs = PATIENCE_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
