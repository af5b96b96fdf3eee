/**
 * A credential scope: `read` opens GET routes, `write` opens POST and DELETE
 * routes (`POST /ingest` too, for any node), `ingest` opens only `POST /ingest`,
 * `metrics` opens only `GET /metrics` (which `read` opens too).
 */
export type Scope = 'read' | 'write' | 'ingest' | 'metrics';

/** Who is calling, as decided by the credential. */
export interface Principal {
  userId: string;
  /** The key's id, or `env` for ESTATE_API_KEY, or `token` for a bearer token. */
  keyId: string;
  scopes: readonly Scope[];
  /** The one node whose samples the credential may ingest (an ingest key made with `--node`); any node when absent. */
  node?: string;
}
