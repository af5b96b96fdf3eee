import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { z } from 'zod';
import { EstateError } from '../../errors.ts';
import { writeFileAtomic } from '../atomic-write.ts';
import { dataPath } from '../data-files.ts';
import { withFileLock } from '../file-lock.ts';
import { isNotFound } from '../fs-errors.ts';

// keys.json holds only SHA-256 hashes of API keys (a key carries 192 random
// bits, so a fast hash is enough), written atomically with mode 0600.
// Key format: `est_<key_id>_<secret>`; the id lets a check find the one
// record to compare against, in constant time.

export const SCOPES = ['read', 'write'] as const;

const keyRecord = z.object({
  key_id: z.string(),
  user_id: z.string(),
  name: z.string().nullable(),
  hash: z.string(),
  scopes: z.array(z.enum(SCOPES)),
  created_at: z.string(),
  expires_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
});
const keyFile = z.object({ version: z.literal(1), keys: z.array(keyRecord) });

export type KeyRecord = z.output<typeof keyRecord>;
/** A key as shown to people: everything but the hash. */
export type KeyInfo = Omit<KeyRecord, 'hash'>;

export const USER_ID = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
const KEY_FORMAT = /^est_([0-9a-f]{12})_([A-Za-z0-9_-]{32})$/;

export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** Constant-time equality of two secrets of any length. */
export function secretsEqual(a: string, b: string): boolean {
  return timingSafeEqual(hashSecret(a), hashSecret(b));
}

export function readKeys(dataDir: string): KeyRecord[] {
  let text: string;
  try {
    text = readFileSync(dataPath(dataDir, 'keys'), 'utf8');
  } catch (err) {
    if (isNotFound(err)) return [];
    throw err;
  }
  const parsed = keyFile.safeParse(safeJson(text));
  if (!parsed.success) throw new EstateError('io', `keys.json in ${dataDir} is corrupt; restore it from a backup or remove it and create new keys`);
  return parsed.data.keys;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

async function updateKeys<T>(dataDir: string, change: (keys: KeyRecord[]) => T): Promise<T> {
  const file = dataPath(dataDir, 'keys');
  return withFileLock(`${file}.lock`, async () => {
    const keys = readKeys(dataDir);
    const result = change(keys);
    await writeFileAtomic(file, `${JSON.stringify({ version: 1, keys }, null, 2)}\n`, 0o600);
    return result;
  });
}

export interface CreateKeyOptions {
  userId: string;
  name?: string | undefined;
  scopes?: readonly (typeof SCOPES)[number][];
  expiresAt?: Date | undefined;
  now?: Date;
}

/** Creates a key and returns it with its secret, the only time the secret exists outside the caller. */
export async function createKey(dataDir: string, options: CreateKeyOptions): Promise<{ info: KeyInfo; key: string }> {
  if (!USER_ID.test(options.userId)) {
    throw new EstateError('validation', `invalid user "${options.userId}": use 1-64 letters, digits, '.', '_', '@' or '-'`);
  }
  const keyId = randomBytes(6).toString('hex');
  const key = `est_${keyId}_${randomBytes(24).toString('base64url')}`;
  const record: KeyRecord = {
    key_id: keyId,
    user_id: options.userId,
    name: options.name ?? null,
    hash: `sha256:${hashSecret(key).toString('hex')}`,
    scopes: [...(options.scopes ?? SCOPES)],
    created_at: (options.now ?? new Date()).toISOString(),
    expires_at: options.expiresAt?.toISOString() ?? null,
    revoked_at: null,
  };
  await updateKeys(dataDir, (keys) => keys.push(record));
  const { hash: _hash, ...info } = record;
  return { info, key };
}

export function listKeys(dataDir: string): KeyInfo[] {
  return readKeys(dataDir).map(({ hash: _hash, ...info }) => info);
}

/** Marks a key revoked; undefined when there is no such key. */
export async function revokeKey(dataDir: string, keyId: string, now = new Date()): Promise<KeyInfo | undefined> {
  return updateKeys(dataDir, (keys) => {
    const record = keys.find((k) => k.key_id === keyId);
    if (!record) return undefined;
    record.revoked_at ??= now.toISOString();
    const { hash: _hash, ...info } = record;
    return info;
  });
}

/** The record a presented key belongs to, if it is genuine, live and not expired. */
export function matchKey(keys: readonly KeyRecord[], presented: string, now: Date): KeyRecord | undefined {
  const m = KEY_FORMAT.exec(presented);
  const record = m ? keys.find((k) => k.key_id === m[1]) : undefined;
  const expected = record ? Buffer.from(record.hash.replace(/^sha256:/, ''), 'hex') : Buffer.alloc(32);
  const actual = hashSecret(presented);
  const equal = expected.length === actual.length && timingSafeEqual(expected, actual);
  if (!record || !equal) return undefined;
  if (record.revoked_at) return undefined;
  if (record.expires_at && Date.parse(record.expires_at) <= now.getTime()) return undefined;
  return record;
}

/**
 * Reads keys.json again only when it changed (size, mtime or inode), so a
 * running server sees created and revoked keys at once without a restart.
 */
export class KeyCache {
  #stamp = '';
  #keys: KeyRecord[] = [];

  constructor(private readonly dataDir: string) {}

  get(): readonly KeyRecord[] {
    let stamp = 'missing';
    try {
      const s = statSync(dataPath(this.dataDir, 'keys'));
      stamp = `${s.ino}:${s.size}:${s.mtimeMs}`;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (stamp !== this.#stamp) {
      this.#keys = stamp === 'missing' ? [] : readKeys(this.dataDir);
      this.#stamp = stamp;
    }
    return this.#keys;
  }
}
