// When a failed delivery is tried again (docs/notify.md): exponential
// backoff from FIRST_RETRY_MS, doubling per attempt up to MAX_RETRY_MS, with
// jitter (each delay drawn from its upper half), until the delivery's
// `expires_at` (created_at + the target's `retry_for`).

export const FIRST_RETRY_MS = 5_000;
export const MAX_RETRY_MS = 5 * 60_000;

/** The delay after the `attempts`-th failed attempt (1 for the first), `random` in [0, 1). */
export function retryDelayMs(attempts: number, random: number = Math.random()): number {
  const ceiling = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.min(attempts - 1, 30));
  return Math.round(ceiling / 2 + (ceiling / 2) * random);
}
