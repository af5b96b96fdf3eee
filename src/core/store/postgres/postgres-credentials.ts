import { randomBytes } from 'node:crypto';
import { keyDifferences, keyInfo, newKey, parseKeyRecords, type KeyRecord } from '../../keys/key-store.ts';
import type { Scope } from '../../keys/principal.ts';
import type { Credentials, RestoreResult, TokenSecret } from '../store.ts';
import { EstateError } from '../../../errors.ts';
import { failureCode, transaction, withinDeadline, type Sql } from './connect.ts';

// The credential store in `api_keys` (SHA-256 hashes only, as bytea) and the
// token signing key in `token_secret`. Lookups for authentication are cached
// for CACHE_MS, so a key created or revoked through any replica is honoured
// by every other within that (the Store contract allows 3 s).

const CACHE_MS = 1000;
/** Cached lookups kept at most (a flood of made-up key ids must not grow memory without bound). */
const CACHE_MAX = 10_000;
/** How long /readyz waits for the credential check. */
const HEALTH_MS = 3000;

interface KeyRow {
  key_id: string;
  hash: Buffer;
  user_id: string;
  name: string | null;
  scopes: string[];
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

// An ingest key's node (`--node`) is kept in `scopes` as one more element,
// `node:NAME`, rather than in a column of its own: no schema migration, and
// a build from before ingest keys, which knows no such scope, refuses the
// key everywhere instead of letting it ingest for any node. Elements are
// sent joined by U+001F, which neither a scope nor a node name can hold.

const NODE_PREFIX = 'node:';
const SEPARATOR = '\u001f';

/** `scopes` as stored: the scopes, then `node:NAME` for a key bound to a node. */
function storedScopes(record: KeyRecord): string {
  return [...record.scopes, ...(record.node === null ? [] : [`${NODE_PREFIX}${record.node}`])].join(SEPARATOR);
}

function toRecord(row: KeyRow): KeyRecord {
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  const node = row.scopes.find((s) => s.startsWith(NODE_PREFIX));
  return {
    key_id: row.key_id,
    user_id: row.user_id,
    name: row.name,
    hash: `sha256:${row.hash.toString('hex')}`,
    scopes: row.scopes.filter((s) => !s.startsWith(NODE_PREFIX)) as Scope[],
    created_at: row.created_at.toISOString(),
    expires_at: iso(row.expires_at),
    revoked_at: iso(row.revoked_at),
    last_used_at: iso(row.last_used_at),
    node: node === undefined ? null : node.slice(NODE_PREFIX.length),
  };
}

const COLUMNS = 'key_id, hash, user_id, name, scopes, created_at, expires_at, revoked_at, last_used_at';

export function postgresCredentials(sql: Sql, store: string): Credentials {
  const cache = new Map<string, { at: number; record: KeyRecord | undefined }>();
  const forget = (keyId: string) => cache.delete(keyId);
  return {
    create: async (options) => {
      const { record, key } = newKey(options);
      await withinDeadline(
        store,
        () => sql`INSERT INTO api_keys (key_id, hash, user_id, name, scopes, created_at, expires_at, revoked_at, last_used_at)
          VALUES (${record.key_id}, ${Buffer.from(record.hash.replace(/^sha256:/, ''), 'hex')}, ${record.user_id}, ${record.name},
                  string_to_array(${storedScopes(record)}, chr(31)), ${record.created_at}, ${record.expires_at}, NULL, NULL)`,
      );
      forget(record.key_id);
      return { info: keyInfo(record), key };
    },
    list: async () => {
      const rows = await withinDeadline(store, () => sql.unsafe(`SELECT ${COLUMNS} FROM api_keys ORDER BY seq`));
      return rows.map((row) => keyInfo(toRecord(row as unknown as KeyRow)));
    },
    revoke: async (keyId, now) => {
      const rows = await withinDeadline(
        store,
        () => sql.unsafe(`UPDATE api_keys SET revoked_at = coalesce(revoked_at, $2) WHERE key_id = $1 RETURNING ${COLUMNS}`, [keyId, now.toISOString()]),
      );
      forget(keyId);
      const row = rows[0] as unknown as KeyRow | undefined;
      return row ? keyInfo(toRecord(row)) : undefined;
    },
    touch: async (keyId, at) => {
      await withinDeadline(
        store,
        () => sql`UPDATE api_keys SET last_used_at = ${at.toISOString()} WHERE key_id = ${keyId} AND (last_used_at IS NULL OR last_used_at < ${at.toISOString()})`,
      );
    },
    lookup: async (keyId) => {
      const cached = cache.get(keyId);
      if (cached && Date.now() - cached.at < CACHE_MS) return cached.record;
      const rows = await withinDeadline(store, () => sql.unsafe(`SELECT ${COLUMNS} FROM api_keys WHERE key_id = $1`, [keyId]));
      const row = rows[0] as unknown as KeyRow | undefined;
      const record = row ? toRecord(row) : undefined;
      if (cache.size >= CACHE_MAX) cache.clear();
      cache.set(keyId, { at: Date.now(), record });
      return record;
    },
    health: async () => {
      try {
        await withinDeadline(store, () => sql`SELECT 1 FROM api_keys LIMIT 1`, HEALTH_MS);
        return 'ok';
      } catch (err) {
        return failureCode(err);
      }
    },
    all: async () => {
      const rows = await withinDeadline(store, () => sql.unsafe(`SELECT ${COLUMNS} FROM api_keys ORDER BY seq`));
      return rows.map((row) => toRecord(row as unknown as KeyRow));
    },
    restore: async (input) => {
      const records = parseKeyRecords(input);
      const results = await withinDeadline(store, () =>
        transaction(sql, async (tx) => {
          const out: RestoreResult<KeyRecord>[] = [];
          for (const r of records) {
            const inserted = await tx`INSERT INTO api_keys (key_id, hash, user_id, name, scopes, created_at, expires_at, revoked_at, last_used_at)
              VALUES (${r.key_id}, ${Buffer.from(r.hash.replace(/^sha256:/, ''), 'hex')}, ${r.user_id}, ${r.name},
                      string_to_array(${storedScopes(r)}, chr(31)), ${r.created_at}, ${r.expires_at}, ${r.revoked_at}, ${r.last_used_at})
              ON CONFLICT (key_id) DO NOTHING RETURNING key_id`;
            if (inserted.length > 0) {
              out.push({ outcome: 'created', stored: r });
              continue;
            }
            const [row] = await tx.unsafe(`SELECT ${COLUMNS} FROM api_keys WHERE key_id = $1`, [r.key_id]);
            const stored = toRecord(row as unknown as KeyRow);
            out.push({ outcome: keyDifferences(stored, r).length === 0 ? 'present' : 'conflict', stored });
          }
          return out;
        }),
      );
      for (const r of records) forget(r.key_id);
      return results;
    },
  };
}

export function postgresTokenSecret(sql: Sql, store: string): TokenSecret {
  let cached: { at: number; secret: Uint8Array | undefined } | undefined;
  const read = async (): Promise<Uint8Array | undefined> => {
    const [row] = await sql`SELECT secret FROM token_secret WHERE id = 1`;
    const secret = row ? new Uint8Array(row.secret as Buffer) : undefined;
    cached = { at: Date.now(), secret };
    return secret;
  };
  return {
    ensure: () =>
      withinDeadline(store, async () => {
        await sql`INSERT INTO token_secret (id, secret) VALUES (1, ${randomBytes(32)}) ON CONFLICT (id) DO NOTHING`;
        return (await read()) as Uint8Array;
      }),
    current: async () => {
      if (cached && Date.now() - cached.at < CACHE_MS) return cached.secret;
      return withinDeadline(store, read);
    },
    restore: (secret) =>
      withinDeadline(store, async () => {
        if (secret.length !== 32) throw new EstateError('validation', `a token secret is 32 bytes, not ${secret.length}`);
        const inserted = await sql`INSERT INTO token_secret (id, secret) VALUES (1, ${Buffer.from(secret)}) ON CONFLICT (id) DO NOTHING RETURNING id`;
        const stored = (await read()) as Uint8Array;
        const same = Buffer.from(stored).equals(Buffer.from(secret));
        return { outcome: !same ? 'conflict' : inserted.length > 0 ? 'created' : 'present', stored };
      }),
  };
}
