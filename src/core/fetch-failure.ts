/**
 * Why a `fetch` that threw (not one that answered) failed, in one phrase:
 * `timed out` for an abort by timeout, else the network error of its cause
 * (`connect ECONNREFUSED 127.0.0.1:3000`, `getaddrinfo ENOTFOUND forge.local`).
 */
export function fetchFailure(err: unknown): { timedOut: boolean; reason: string } {
  const error = err as { name?: string; message?: string; cause?: { message?: string } } | undefined;
  if (error?.name === 'TimeoutError' || error?.name === 'AbortError') return { timedOut: true, reason: 'timed out' };
  const reason = error?.cause?.message ?? error?.message ?? String(err);
  // fetch refuses the ports of other protocols (the Fetch standard's "bad ports") without trying them.
  if (reason === 'bad port') return { timedOut: false, reason: 'fetch refuses this port (it belongs to another protocol); use another port' };
  return { timedOut: false, reason };
}
