import type { IncomingMessage } from 'node:http';

/**
 * The secret a request carries, from the first carrier present:
 * `X-API-Key` header, `Authorization: Bearer …`, `?api_key=`.
 * undefined when none is present; '' when a carrier is present but empty.
 */
export function presentedSecret(req: IncomingMessage, query: URLSearchParams): string | undefined {
  const header = req.headers['x-api-key'];
  if (typeof header === 'string') return header.trim();
  const auth = req.headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer[ \t]+(.*)$/i.exec(auth.trim());
    return m ? (m[1] ?? '').trim() : '';
  }
  const fromQuery = query.get('api_key');
  return fromQuery === null ? undefined : fromQuery;
}
