import type { EstateConfig, Secrets } from '../../config.ts';
import { EstateError } from '../../errors.ts';

/** How to reach the forge: resolved from the config and the environment, never logged whole. */
export interface ForgeSettings {
  /** Base URL, without a trailing slash and without /api/v1. */
  url: string;
  token: string | undefined;
  /** The environment variable the token comes from (named in messages, never the token). */
  tokenEnv: string;
  /** Bound on each request. */
  timeoutMs: number;
  cacheS: number;
  /** Bound on the bytes of each answer, and of a listing's answers in all. */
  maxBytes: number;
}

/** The forge settings, or an `unavailable` error (503) when the config has no `forge`. */
export function forgeSettings(config: EstateConfig, secrets: Secrets): ForgeSettings {
  const forge = config.forge;
  if (!forge) {
    throw new EstateError('unavailable', 'the forge is not configured: add "forge": {"url": "http://HOST:3000"} to estate.config.json');
  }
  return {
    url: forge.url.replace(/\/+$/, ''),
    token: secrets.forgeToken,
    tokenEnv: forge.token_env,
    timeoutMs: forge.timeout_ms,
    cacheS: forge.cache_s,
    maxBytes: forge.max_bytes,
  };
}
