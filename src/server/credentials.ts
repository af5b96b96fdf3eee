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
 * may hold an API key or an access token. undefined when none is present.
 */
export function presentedCredential(req: IncomingMessage, query: URLSearchParams): PresentedCredential | undefined {
  const header = req.headers['x-api-key'];
  if (typeof header === 'string') return { carrier: 'x-api-key', secret: header.trim() };
  const auth = req.headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer[ \t]+(.*)$/i.exec(auth.trim());
    return { carrier: 'bearer', secret: m ? (m[1] ?? '').trim() : '' };
  }
  const fromQuery = query.get('api_key');
  return fromQuery === null ? undefined : { carrier: 'query', secret: fromQuery };
}

/** The secret alone (see presentedCredential): undefined when none is present, '' when a carrier is empty. */
export function presentedSecret(req: IncomingMessage, query: URLSearchParams): string | undefined {
  return presentedCredential(req, query)?.secret;
}
