import type { IncomingMessage } from 'node:http';

/** Where a request carried its credential. */
export type Carrier = 'x-api-key' | 'bearer' | 'query';

export interface PresentedCredential {
  carrier: Carrier;
  /** The secret as sent, trimmed; '' when the carrier is present but empty (an invalid credential). */
  secret: string;
}

/**
 * The credential a request carries, from the first carrier present:
 * `X-API-Key` header, `Authorization: Bearer …`, `?api_key=`. Any carrier
 * may hold an API key or an access token; the carriers after the first are
 * not read, even when the first holds an invalid credential. `api_key` sent
 * more than once is an invalid credential. undefined when none is present.
 */
export function presentedCredential(req: IncomingMessage, query: URLSearchParams): PresentedCredential | undefined {
  const header = req.headers['x-api-key'];
  if (typeof header === 'string') return { carrier: 'x-api-key', secret: header.trim() };
  const auth = req.headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer[ \t]+(.*)$/i.exec(auth.trim());
    return { carrier: 'bearer', secret: m ? (m[1] ?? '').trim() : '' };
  }
  const fromQuery = query.getAll('api_key');
  if (fromQuery.length === 0) return undefined;
  // Sent twice, `api_key` names no one credential: it is an invalid one, never the first or the last.
  return { carrier: 'query', secret: fromQuery.length === 1 ? (fromQuery[0] as string) : '' };
}

/** The secret alone (see presentedCredential): undefined when none is present, '' when a carrier is empty. */
export function presentedSecret(req: IncomingMessage, query: URLSearchParams): string | undefined {
  return presentedCredential(req, query)?.secret;
}
