// The dashboard's reads of the API: paths relative to the page (so estate
// behind a path prefix works), the tab's key as X-API-Key, and conditional
// requests: each answer's ETag is sent back as If-None-Match, so data that
// has not changed costs a 304 and no body.

export type Answer<T> =
  | { kind: 'ok'; data: T; changed: boolean }
  /** A protected route asked without a key. */
  | { kind: 'needs-key' }
  /** The key was refused (invalid, revoked, or without the scope). */
  | { kind: 'refused'; message: string }
  | { kind: 'error'; message: string };

/** Answers kept for their ETags, the oldest dropped past this many. */
const MAX_KEPT = 256;

export class Api {
  readonly #key: () => string | undefined;
  readonly #kept = new Map<string, { etag: string; data: unknown }>();
  /** Requests sent and 304s received, for the page's footer and its tests. */
  readonly counts = { sent: 0, notModified: 0 };

  constructor(key: () => string | undefined) {
    this.#key = key;
  }

  /** GET `path`; a protected one (`needsKey`) is not asked at all without a key (it would only be refused). */
  async get<T>(path: string, options: { needsKey?: boolean } = {}): Promise<Answer<T>> {
    const key = this.#key();
    if (options.needsKey && !key) return { kind: 'needs-key' };
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (key) headers['X-API-Key'] = key;
    // Answers to a key are kept apart from the public ones (a key may see more).
    const slot = `${key ? 'key' : 'public'} ${path}`;
    const kept = this.#kept.get(slot);
    if (kept) headers['If-None-Match'] = kept.etag;
    let res: Response;
    this.counts.sent++;
    try {
      // no-store: the browser's own cache stays out; the ETags are kept here.
      res = await fetch(path, { headers, cache: 'no-store', credentials: 'omit', redirect: 'error' });
    } catch {
      return { kind: 'error', message: 'The server did not answer.' };
    }
    if (res.status === 304 && kept) {
      this.counts.notModified++;
      this.#kept.delete(slot);
      this.#kept.set(slot, kept);
      return { kind: 'ok', data: kept.data as T, changed: false };
    }
    if (res.status === 403) return key ? { kind: 'refused', message: await detailOf(res) } : { kind: 'needs-key' };
    if (!res.ok) return { kind: 'error', message: `${res.status}: ${await detailOf(res)}` };
    let data: T;
    try {
      data = (await res.json()) as T;
    } catch {
      return { kind: 'error', message: 'The answer was not JSON.' };
    }
    const etag = res.headers.get('ETag');
    if (etag) {
      this.#kept.delete(slot);
      this.#kept.set(slot, { etag, data });
      for (const oldest of this.#kept.keys()) {
        if (this.#kept.size <= MAX_KEPT) break;
        this.#kept.delete(oldest);
      }
    }
    return { kind: 'ok', data, changed: true };
  }
}

/** The `detail` of an error answer as one line of text. */
async function detailOf(res: Response): Promise<string> {
  try {
    const body = (await res.json()) as { detail?: unknown };
    if (typeof body.detail === 'string') return body.detail;
    if (Array.isArray(body.detail)) return body.detail.map((d: { msg?: unknown }) => String(d?.msg ?? '')).join('; ');
  } catch {}
  return res.statusText || 'error';
}

/** A query string from the values given (undefined ones left out). */
export function query(values: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) if (value !== undefined && value !== '') q.set(name, String(value));
  const text = q.toString();
  return text ? `?${text}` : '';
}
