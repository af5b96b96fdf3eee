import { EstateError } from '../../errors.ts';

/** A Standard Webhooks secret: `whsec_` and the key in base64 (at least 16 bytes). */
const SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/;

/**
 * The signing key of a target from the value of its `secret_env` variable,
 * or a `usage` error naming the variable (never its value) when it is
 * unset or not a `whsec_` secret.
 */
export function readWebhookSecret(envName: string, value: string | undefined): string {
  if (!value) throw new EstateError('usage', `the environment variable ${envName} (secret_env) is not set: put the target's whsec_ secret in it`);
  const m = SECRET.exec(value.trim());
  if (!m || Buffer.from(m[1] as string, 'base64').length < 16) {
    throw new EstateError('usage', `the environment variable ${envName} (secret_env) does not hold a whsec_ secret (whsec_ and at least 16 bytes in base64)`);
  }
  return value.trim();
}
