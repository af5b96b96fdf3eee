import { dataDirOption } from '../config.ts';
import { shellWord } from '../shell-word.ts';
import { describeStoreUrl, isPostgresSpec } from './store/open-store.ts';
import type { Credentials } from './store/store.ts';

// Whether a store has a key yet, and how to make its first one: a fresh
// data dir has none, so every protected route answers 403 until one exists
// (said by `estate serve` and `estate doctor`).

/**
 * How many keys of the store can open a route at `now`: neither revoked nor
 * expired. Reads through the store's list, so an unreadable store throws as
 * list does.
 */
export async function liveKeyCount(credentials: Pick<Credentials, 'list'>, now: Date): Promise<number> {
  const keys = await credentials.list();
  return keys.filter((k) => k.revoked_at === null && (k.expires_at === null || Date.parse(k.expires_at) > now.getTime())).length;
}

/**
 * The command that creates a key in the store at hand: with `--data-dir DIR`
 * where a command run with `env` needs it to find `dataDir`, and with
 * `--store` when a PostgreSQL store was named by that flag (its URL shown
 * without a password: the user supplies it as they did).
 */
export function keysCreateHint(dataDir: string, env: NodeJS.ProcessEnv, storeFlag?: string): string {
  const store = storeFlag && isPostgresSpec(storeFlag) ? ` --store ${shellWord(describeStoreUrl(storeFlag))}` : '';
  return `estate keys create --user NAME${store ? '' : dataDirOption(dataDir, env)}${store}`;
}
