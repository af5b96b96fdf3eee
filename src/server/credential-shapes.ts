// Secrets that may travel where they should not (a URL, a request id) by
// mistake: API keys (`est_<key id>_<secret>`) and access tokens (JWTs).

const KEY_SHAPED = /est_([0-9a-f]{12})_[A-Za-z0-9_-]+/g;
const TOKEN_SHAPED = /eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g;

/** `text` with every API key replaced by `est_<key id>_REDACTED` and every token by `REDACTED`. */
export function redactCredentialShapes(text: string): string {
  return text.replace(KEY_SHAPED, 'est_$1_REDACTED').replace(TOKEN_SHAPED, 'REDACTED');
}

/** Whether `text` holds something shaped like an API key or an access token. */
export function hasCredentialShape(text: string): boolean {
  return redactCredentialShapes(text) !== text;
}
