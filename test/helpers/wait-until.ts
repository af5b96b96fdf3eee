/**
 * Polls `check` until it returns true, failing with `what` after `timeoutMs`.
 * For effects that land "soon" (a watcher event, a background write) without
 * asserting on wall-clock speed: the timeout is generous on purpose.
 */
export async function waitUntil(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
