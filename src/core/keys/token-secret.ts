import { randomBytes } from 'node:crypto';
import { link, open, unlink } from 'node:fs/promises';
import path from 'node:path';
import { EstateError } from '../../errors.ts';
import { isNotFound } from '../fs-errors.ts';
import { readDataFile, readDataFileSync } from '../open-data-file.ts';
import type { RestoreResult, TokenSecret } from '../store/store.ts';
import { CheckedFile } from './checked-file.ts';

// The key that signs and checks bearer tokens: 32 random bytes, as 64 hex
// digits and a newline, in `<data dir>/token-secret`, mode 0600. Replacing or
// deleting the file invalidates every token signed with the old one.

export const TOKEN_SECRET_FILE = 'token-secret';
const FORMAT = /^([0-9a-f]{64})\n?$/;

export function tokenSecretPath(dataDir: string): string {
  return path.join(dataDir, TOKEN_SECRET_FILE);
}

function decode(text: string, file: string): Uint8Array {
  const m = FORMAT.exec(text);
  if (!m) throw new EstateError('io', `${file} is corrupt: delete it (every token issued so far stops working) and issue new tokens`);
  return Buffer.from(m[1] as string, 'hex');
}

/** The secret, or undefined when the file does not exist (no token was ever issued). */
export function readTokenSecret(dataDir: string): Uint8Array | undefined {
  const file = tokenSecretPath(dataDir);
  const text = readTextOrNothing(file);
  return text === undefined ? undefined : decode(text, file);
}

function readTextOrNothing(file: string): string | undefined {
  try {
    return readDataFileSync(file);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * The secret, created on first use. Safe when several processes create it at
 * once: each writes a complete temp file and hard-links it into place, which
 * fails for all but the first; the others read the winner's secret.
 */
export async function ensureTokenSecret(dataDir: string): Promise<Uint8Array> {
  const existing = readTokenSecret(dataDir);
  if (existing) return existing;
  return placeSecret(dataDir, randomBytes(32));
}

/**
 * Makes `secret` the token secret unless there is one (TokenSecret.restore):
 * `created`, `present` (the same) or `conflict` (another, kept).
 */
export async function restoreTokenSecret(dataDir: string, secret: Uint8Array): Promise<RestoreResult<Uint8Array>> {
  if (secret.length !== 32) throw new EstateError('validation', `a token secret is 32 bytes, not ${secret.length}`);
  const existing = readTokenSecret(dataDir);
  const stored = existing ?? (await placeSecret(dataDir, secret));
  const same = Buffer.from(stored).equals(Buffer.from(secret));
  return { outcome: !same ? 'conflict' : existing ? 'present' : 'created', stored };
}

/** Writes `secret` to a temp file and links it into place unless a secret is there; returns the one in place. */
async function placeSecret(dataDir: string, secret: Uint8Array): Promise<Uint8Array> {
  const file = tokenSecretPath(dataDir);
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const handle = await open(temp, 'wx', 0o600);
  try {
    try {
      await handle.writeFile(`${Buffer.from(secret).toString('hex')}\n`, 'utf8');
      await handle.chmod(0o600);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await link(temp, file).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
  } finally {
    await unlink(temp).catch(() => {});
  }
  return decode(await readDataFile(file), file);
}

/**
 * The data dir's token secret as a Store's `tokenSecret`: `current()` is
 * checked against the file at every call (CheckedFile), so deleting it
 * (every token dies) counts from the next request, with no restart.
 */
export function dataDirTokenSecret(dataDir: string): TokenSecret {
  const file = tokenSecretPath(dataDir);
  let checked: CheckedFile<Uint8Array | undefined> | undefined;
  return {
    ensure: () => ensureTokenSecret(dataDir),
    restore: (secret) => restoreTokenSecret(dataDir, secret),
    current: async () => {
      checked ??= new CheckedFile(file, () => readTextOrNothing(file), (text) => (text === undefined ? undefined : decode(text, file)));
      return checked.get();
    },
  };
}
