import * as crypto from 'node:crypto';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { Scope } from './principal.ts';
import { EstateError } from '../../errors.ts';
import { writeFileAtomic } from '../atomic-write.ts';
import { dataPath } from '../data-files.ts';
import { withFileLock } from '../file-lock.ts';
import { isNotFound } from '../fs-errors.ts';
import { fileRefusal, readDataFile, readDataFileSync } from '../open-data-file.ts';
import { DEFAULT_SCOPES, SCOPES } from './scopes.ts';
import { isNodeName, NODE_NAME_RULE } from '../hub/node-name.ts';
import { CheckedFile } from './checked-file.ts';
import type { RestoreResult } from '../store/store.ts';

// keys.json holds only SHA-256 hashes of API keys (a key carries 192 random
// bits, so a fast hash is enough), written atomically with mode 0600.
// Key format: `est_<key_id>_<secret>`; the id lets a check find the one
// record to compare against, in constant time. Several keys of one user may
// be live at once, so a key is rotated by creating its successor first and
// revoking it once nothing uses it any more.

export { SCOPES };

const keyRecord = z.object({
  key_id: z.string(),
  user_id: z.string(),
  name: z.string().nullable(),
  hash: z.string(),
  scopes: z.array(z.enum(SCOPES)),
  created_at: z.string(),
  expires_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
  /** When the key last opened a route; written at most once a minute per key, so it may lag by that much. */
  last_used_at: z.string().nullable().default(null),
  /** The one node whose samples an `ingest` key may send (`--node`); null: any node. Absent in key stores written before issue 24. */
  node: z.string().nullable().default(null),
});
const keyFile = z.object({ version: z.literal(1), keys: z.array(keyRecord) });

export type KeyRecord = z.output<typeof keyRecord>;
/** A key as shown to people: everything but the hash. */
export type KeyInfo = Omit<KeyRecord, 'hash'>;

export const USER_ID = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
const KEY_FORMAT = /^est_([0-9a-f]{12})_([A-Za-z0-9_-]{32})$/;
const MAX_NAME = 100;

/** Throws a `validation` error unless `userId` is a valid user id. */
export function assertUserId(userId: string): void {
  if (!USER_ID.test(userId)) {
    throw new EstateError('validation', `invalid user "${userId}": use 1-64 letters, digits, '.', '_', '@' or '-', starting with a letter or digit`);
  }
}

/** The key id of something shaped like an API key (`est_<id>_…`), else undefined; safe to log. */
export function keyIdOf(presented: string): string | undefined {
  return /^est_([0-9a-f]{12})_/.exec(presented)?.[1];
}

export function hashSecret(secret: string): Buffer {
  // crypto.hash (Node 20.12+) in one call, else a Hash object.
  return typeof crypto.hash === 'function' ? crypto.hash('sha256', secret, 'buffer') : createHash('sha256').update(secret, 'utf8').digest();
}

/** Constant-time equality of two secrets of any length. */
export function secretsEqual(a: string, b: string): boolean {
  return timingSafeEqual(hashSecret(a), hashSecret(b));
}

/** `secretsEqual(·, secret)` with `secret` hashed once: for a secret checked on every request (ESTATE_API_KEY). */
export function secretMatcher(secret: string): (candidate: string) => boolean {
  const hashed = hashSecret(secret);
  return (candidate) => timingSafeEqual(hashSecret(candidate), hashed);
}

/**
 * Every key in keys.json; [] when there is none. A keys.json that cannot be
 * read or does not parse is `unavailable` (503, exit 1), with a message that
 * names the credential store and never its file or path (the error's cause
 * names them, for the server's log): no key can be checked until the
 * operator repairs it.
 */
export function readKeys(dataDir: string): KeyRecord[] {
  return parseKeys(readKeysText(dataDir), dataDir);
}

/** keys.json's text, undefined when there is none; `unavailable` (readKeys) when it cannot be read. */
function readKeysText(dataDir: string): string | undefined {
  try {
    return readDataFileSync(dataPath(dataDir, 'keys'));
  } catch (err) {
    if (isNotFound(err)) return undefined;
    const refused = fileRefusal(err);
    if (refused) throw credentialStoreError(refused === 'link' ? 'is a symbolic link, which estate never follows' : 'is not a regular file', err);
    if (err instanceof EstateError) throw err;
    throw credentialStoreError(`cannot be read (${errnoCode(err)})`, err);
  }
}

/** The keys of keys.json's text (readKeysText); `unavailable` (readKeys) when it does not parse. */
function parseKeys(text: string | undefined, dataDir: string): KeyRecord[] {
  if (text === undefined) return [];
  const parsed = keyFile.safeParse(safeJson(text));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const why = issue ? `${issue.path.join('.') || 'the top level'}: ${issue.message}` : 'invalid';
    throw credentialStoreError('is corrupt', new Error(`${dataPath(dataDir, 'keys')} is not a key store (${why})`));
  }
  return parsed.data.keys;
}

/**
 * The state of keys.json for a readiness probe: `ok` (also when there is
 * none), `corrupt`, `refused: link` or `refused: not a regular file` (see
 * openDataFile), or the error code that failed its read. Never throws.
 */
export async function keyStoreHealth(dataDir: string): Promise<string> {
  let text: string;
  try {
    text = await readDataFile(dataPath(dataDir, 'keys'));
  } catch (err) {
    if (isNotFound(err)) return 'ok';
    const refused = fileRefusal(err);
    return refused ? `refused: ${refused}` : errnoCode(err);
  }
  return keyFile.safeParse(safeJson(text)).success ? 'ok' : 'corrupt';
}

/** The one message of a credential store that cannot be used: it names the store, never its file (clients have no use for it); `cause` does, for the log. */
function credentialStoreError(problem: string, cause: unknown): EstateError {
  return new EstateError(
    'unavailable',
    `the credential store ${problem}: no API key can be checked until it is restored from a backup, or removed and new keys created`,
    { cause },
  );
}

function errnoCode(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) ? code : 'failed';
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** How many times a change is made again on a keys.json that changed under it before it gives up. */
const UPDATE_ATTEMPTS = 3;

/**
 * Applies `change` to the keys and writes them back, under keys.json's
 * lock. Right before the new file replaces the old one (in one synchronous
 * step with the rename: no other work of this process between them), the
 * lock must still be ours and keys.json still the text `change` was applied
 * to; if it is not (a hand edit, a copy, a torn write: someone who does not
 * take the lock), the change is made again on what is there now, so a write
 * never undoes one it did not see, and a store that no longer parses stays
 * as it is.
 */
async function updateKeys<T>(dataDir: string, change: (keys: KeyRecord[]) => T): Promise<T> {
  const file = dataPath(dataDir, 'keys');
  return withFileLock(`${file}.lock`, async (lock) => {
    for (let attempt = 1; ; attempt++) {
      const text = readKeysText(dataDir);
      const keys = parseKeys(text, dataDir);
      const result = change(keys);
      const written = await writeFileAtomic(file, `${JSON.stringify({ version: 1, keys }, null, 2)}\n`, 0o600, () => {
        lock.checkSync();
        return readKeysText(dataDir) === text;
      });
      if (written) return result;
      if (attempt === UPDATE_ATTEMPTS) {
        throw new EstateError('unavailable', 'the credential store kept changing while estate wrote to it (is something else writing it?): nothing was written; retry shortly', {
          headers: { 'Retry-After': '1' },
        });
      }
    }
  });
}

export interface CreateKeyOptions {
  userId: string;
  name?: string | undefined;
  /** Default: read and write. */
  scopes?: readonly Scope[] | undefined;
  /** The one node whose samples the key may ingest; only with the `ingest` scope. */
  node?: string | undefined;
  /** Default: never. */
  expiresAt?: Date | undefined;
  now?: Date;
}

/**
 * A new key's record and its secret, the options checked (`validation`
 * errors): what every store's `credentials.create` stores.
 */
export function newKey(options: CreateKeyOptions): { record: KeyRecord; key: string } {
  assertUserId(options.userId);
  if (options.name !== undefined && (options.name.length > MAX_NAME || /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/.test(options.name))) {
    throw new EstateError('validation', `invalid name: at most ${MAX_NAME} characters, no control characters or bidi overrides`);
  }
  if (options.scopes !== undefined && options.scopes.length === 0) throw new EstateError('validation', 'a key needs at least one scope');
  if (options.node !== undefined) assertKeyNode(options.node, options.scopes ?? DEFAULT_SCOPES);
  const now = options.now ?? new Date();
  if (options.expiresAt && options.expiresAt.getTime() <= now.getTime()) throw new EstateError('validation', 'the expiry must be in the future');
  const keyId = randomBytes(6).toString('hex');
  const key = `est_${keyId}_${randomBytes(24).toString('base64url')}`;
  const record: KeyRecord = {
    key_id: keyId,
    user_id: options.userId,
    name: options.name ?? null,
    hash: `sha256:${hashSecret(key).toString('hex')}`,
    scopes: SCOPES.filter((s) => (options.scopes ?? DEFAULT_SCOPES).includes(s)),
    created_at: now.toISOString(),
    expires_at: options.expiresAt?.toISOString() ?? null,
    revoked_at: null,
    last_used_at: null,
    node: options.node ?? null,
  };
  return { record, key };
}

/** Throws a `validation` error unless `node` is a node name and `scopes` hold `ingest`, the only scope a node binds. */
function assertKeyNode(node: string, scopes: readonly Scope[]): void {
  if (!scopes.includes('ingest')) throw new EstateError('validation', 'a node is given only to a key with the ingest scope (--scope ingest --node NAME)');
  if (!isNodeName(node)) throw new EstateError('validation', `invalid node: ${NODE_NAME_RULE}`);
}

/** A key as shown to people: the record without its hash. */
export function keyInfo(record: KeyRecord): KeyInfo {
  const { hash: _hash, ...info } = record;
  return info;
}

/** Creates a key and returns it with its secret, the only time the secret exists outside the caller. */
export async function createKey(dataDir: string, options: CreateKeyOptions): Promise<{ info: KeyInfo; key: string }> {
  const { record, key } = newKey(options);
  await updateKeys(dataDir, (keys) => keys.push(record));
  return { info: keyInfo(record), key };
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

/** Uses of keys waiting for one write of keys.json (touchKey). */
interface UseBatch {
  uses: Map<string, Date>;
  written: Promise<void>;
}

/** Per data dir, the batch of this process still open to more uses. */
const openBatches = new Map<string, UseBatch>();

/**
 * Records that a key was used at `at`, unless a later use is recorded
 * already. A key that is gone is left alone. Goes through the same lock and
 * atomic write as every other change, so it never undoes a revocation.
 * Uses recorded while a write waits for the lock join it: a server whose
 * keys are all used at once takes the lock once, not once per key.
 */
export function touchKey(dataDir: string, keyId: string, at: Date): Promise<void> {
  const batch = openBatches.get(dataDir) ?? startBatch(dataDir);
  const before = batch.uses.get(keyId);
  if (!before || before.getTime() < at.getTime()) batch.uses.set(keyId, at);
  return batch.written;
}

function startBatch(dataDir: string): UseBatch {
  const batch: UseBatch = { uses: new Map(), written: Promise.resolve() };
  // The batch closes once the lock is held (or the write failed); a later use starts the next one.
  const close = () => {
    if (openBatches.get(dataDir) === batch) openBatches.delete(dataDir);
  };
  batch.written = updateKeys(dataDir, (keys) => {
    close();
    for (const record of keys) {
      const used = batch.uses.get(record.key_id);
      if (used && (!record.last_used_at || Date.parse(record.last_used_at) < used.getTime())) record.last_used_at = used.toISOString();
    }
  }).finally(close);
  openBatches.set(dataDir, batch);
  return batch;
}

/**
 * The fields that make two key records different keys (user, name, hash,
 * scopes, creation, expiry, node; times compared as instants): [] for the same key,
 * whatever its revocation and last use.
 */
export function keyDifferences(a: KeyRecord, b: KeyRecord): string[] {
  const instant = (t: string | null) => (t === null ? null : Date.parse(t));
  const same: Record<string, boolean> = {
    user_id: a.user_id === b.user_id,
    name: a.name === b.name,
    hash: a.hash === b.hash,
    scopes: [...a.scopes].sort().join(',') === [...b.scopes].sort().join(','),
    created_at: instant(a.created_at) === instant(b.created_at),
    expires_at: instant(a.expires_at) === instant(b.expires_at),
    node: a.node === b.node,
  };
  return Object.keys(same).filter((f) => !same[f]);
}

/** Checks key records made elsewhere (a copy of another store): `validation` errors. */
export function parseKeyRecords(records: readonly unknown[]): KeyRecord[] {
  return records.map((r) => {
    const parsed = keyRecord.safeParse(r);
    if (!parsed.success) throw new EstateError('validation', `not a key record: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    return parsed.data;
  });
}

/**
 * Stores key records made elsewhere as they are (Credentials.restore), in
 * order, under the lock: `created` for a new key_id, else `present` (the
 * same key: keyDifferences) or `conflict`; a stored key is never changed.
 * keys.json is rewritten only when a key is added.
 */
export async function restoreKeys(dataDir: string, records: readonly KeyRecord[]): Promise<RestoreResult<KeyRecord>[]> {
  const wanted = parseKeyRecords(records);
  const decide = (keys: KeyRecord[]): RestoreResult<KeyRecord>[] =>
    wanted.map((record) => {
      const stored = keys.find((k) => k.key_id === record.key_id);
      if (stored) return { outcome: keyDifferences(stored, record).length === 0 ? 'present' : 'conflict', stored };
      keys.push(record);
      return { outcome: 'created', stored: record };
    });
  const before = decide(readKeys(dataDir));
  if (before.every((r) => r.outcome !== 'created')) return before;
  return updateKeys(dataDir, decide);
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
 * keys.json as a running server sees it: checked at every lookup
 * (CheckedFile), so a created or revoked key counts from the next request
 * with no restart, and a keys.json that cannot be read or parsed any more is
 * `unavailable` at once, whatever was read before.
 */
export class KeyCache {
  readonly #file: CheckedFile<KeyRecord[]>;

  constructor(dataDir: string) {
    this.#file = new CheckedFile(dataPath(dataDir, 'keys'), () => readKeysText(dataDir), (text) => parseKeys(text, dataDir));
  }

  get(): readonly KeyRecord[] {
    return this.#file.get();
  }
}
