import { EstateError } from '../../../errors.ts';
import { describeStoreUrl } from '../open-store.ts';
import { loadDriver, openPool, storeError, type Sql } from './connect.ts';
import { MIGRATIONS, SCHEMA_VERSION } from './migrations.ts';

/** Serialises concurrent `estate migrate` runs (a transaction-scoped advisory lock; 0x65737461 is "esta"). */
const MIGRATE_LOCK = [0x65737461, 0] as const;

/**
 * The schema version of the database: the highest migration up to which
 * every one is applied (0 when none is), or the highest applied when that is
 * newer than this build knows. A database that has a later migration but
 * misses an earlier one (migrated by a build of another branch) reads as
 * the version before the gap, so it needs `estate migrate`, which applies
 * what is missing.
 */
export async function readSchemaVersion(sql: Sql): Promise<number> {
  const [table] = await sql`SELECT to_regclass('schema_version') IS NOT NULL AS present`;
  if (!table?.present) return 0;
  const rows = await sql`SELECT version FROM schema_version ORDER BY version`;
  return schemaVersionOf(rows.map((r) => Number(r.version)));
}

/** The version the applied migrations `versions` (sorted) make: see readSchemaVersion. */
export function schemaVersionOf(versions: readonly number[]): number {
  const highest = versions.at(-1) ?? 0;
  if (highest > SCHEMA_VERSION) return highest;
  let contiguous = 0;
  for (const v of MIGRATIONS.map((m) => m.version).sort((a, b) => a - b)) {
    if (!versions.includes(v)) break;
    contiguous = v;
  }
  return contiguous;
}

/**
 * Throws unless the database's schema is the one this build needs: older is
 * `usage` ("run estate migrate"), newer is `usage` too (an older estate
 * must not write a schema it does not know), both naming the versions.
 */
export function checkSchemaVersion(found: number, store: string): void {
  if (found === SCHEMA_VERSION) return;
  if (found < SCHEMA_VERSION) {
    const what = found === 0 ? 'has no estate schema yet' : `has schema version ${found}`;
    throw new EstateError('usage', `the store ${store} ${what}; this estate needs version ${SCHEMA_VERSION}: run estate migrate`);
  }
  throw new EstateError(
    'usage',
    `the store ${store} has schema version ${found}, newer than this estate knows; it needs version ${SCHEMA_VERSION}: upgrade estate (a newer release reads version ${found})`,
  );
}

export interface MigrateResult {
  from: number;
  to: number;
  applied: { version: number; description: string }[];
}

/**
 * Applies the migrations not applied yet in one transaction (all or none), under a
 * lock so two runs at once apply each once. Refuses a database whose schema
 * is newer than this build's. `target` stops at that version (a database as
 * an older estate left it, for the tests of an upgrade).
 */
export async function migrate(sql: Sql, store: string, estateVersion: string, target = SCHEMA_VERSION): Promise<MigrateResult> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATE_LOCK[0]}, ${MIGRATE_LOCK[1]})`;
    // A migration that counts a large table takes longer than estate's statement timeout (connect.ts).
    await tx`SET LOCAL statement_timeout = 0`;
    await tx`CREATE TABLE IF NOT EXISTS schema_version (
      version integer PRIMARY KEY,
      description text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now(),
      applied_by text NOT NULL
    )`;
    const done = (await tx`SELECT version FROM schema_version ORDER BY version`).map((r) => Number(r.version));
    const from = schemaVersionOf(done);
    if (from > SCHEMA_VERSION) checkSchemaVersion(from, store);
    const applied: MigrateResult['applied'] = [];
    // Every migration not applied yet, in order: also one below a later one that is (a database migrated by another branch's build).
    for (const m of [...MIGRATIONS].sort((a, b) => a.version - b.version)) {
      if (done.includes(m.version) || m.version > target) continue;
      await tx.unsafe(m.sql);
      await tx`INSERT INTO schema_version (version, description, applied_by) VALUES (${m.version}, ${m.description}, ${`estate ${estateVersion}`})`;
      applied.push({ version: m.version, description: m.description });
    }
    return { from, to: schemaVersionOf([...done, ...applied.map((m) => m.version)].sort((a, b) => a - b)), applied };
  });
}

/**
 * `estate migrate`: brings the database at `url` to this build's schema.
 * The password comes from the URL, PGPASSWORD or the password file (as for
 * the store); an unreachable server is `unavailable`.
 */
export async function migrateStore(url: string, env: NodeJS.ProcessEnv, estateVersion: string): Promise<MigrateResult & { store: string }> {
  const store = describeStoreUrl(url);
  const sql = openPool(await loadDriver(), url, env, { max: 1 });
  try {
    return { store, ...(await migrate(sql, store, estateVersion)) };
  } catch (err) {
    throw storeError(err, store);
  } finally {
    await sql.end({ timeout: 5 });
  }
}
