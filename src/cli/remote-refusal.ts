import { EstateError } from '../errors.ts';

/** What the CLI knows of the credential it sent (RemoteTarget's fields). */
export interface SentCredential {
  url: string;
  apiKey?: string | undefined;
  /** Where the key came from, for messages: `--api-key`, `ESTATE_API_KEY`, `context hub`. */
  credentialFrom?: string | undefined;
}

/**
 * A server's 403 in the CLI's words: which option or variable to set, or
 * that the server refused the key, never the HTTP header names the server's
 * detail speaks of, and never the key. A refusal for a missing scope keeps
 * the server's detail (it names the scope). Exit 4 either way.
 */
export function refusalError(target: SentCredential, detail: string | undefined): EstateError {
  if (!target.apiKey) {
    return new EstateError(
      'forbidden',
      `${target.url} needs a credential for this: pass --api-key or set ESTATE_API_KEY (or use a context that has one: estate context set NAME --url URL --api-key-env VAR)`,
    );
  }
  const key = target.credentialFrom ? `the API key (from ${target.credentialFrom})` : 'the API key';
  if (detail !== undefined && /\bscope\b/.test(detail)) {
    return new EstateError('forbidden', `${target.url} refused ${key} for this: ${detail}`);
  }
  return new EstateError(
    'forbidden',
    `${target.url} refused ${key}: it is unknown there, revoked or expired (create one on the server with estate keys create --user NAME)`,
  );
}
