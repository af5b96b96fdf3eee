// Content negotiation for the one path that is both JSON and a page (`/`).

/**
 * Whether a request for `/` is a browser's asking for a page: its Accept
 * names text/html (or application/xhtml+xml) with a weight above that of
 * application/json. `*\/*` alone (curl, fetch) is not.
 */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const weight = (type: string) => {
    let best = 0;
    for (const part of accept.split(',')) {
      const [name, ...params] = part.trim().toLowerCase().split(';');
      if (name?.trim() !== type) continue;
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      const value = q === undefined ? 1 : Number(q.slice(2));
      if (Number.isFinite(value)) best = Math.max(best, value);
    }
    return best;
  };
  const page = Math.max(weight('text/html'), weight('application/xhtml+xml'));
  return page > 0 && page > weight('application/json');
}
