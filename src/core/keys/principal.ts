/** A credential scope: `read` opens GET routes, `write` opens POST and DELETE routes. */
export type Scope = 'read' | 'write';

/** Who is calling, as decided by the credential. */
export interface Principal {
  userId: string;
  /** The key's id, or `env` for ESTATE_API_KEY, or `token` for a bearer token. */
  keyId: string;
  scopes: readonly Scope[];
}
