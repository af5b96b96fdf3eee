import type { TestContext } from 'node:test';
import postgres from 'postgres';
import { parseConfig } from '../../src/config.ts';
import { openStore } from '../../src/core/store/open-store.ts';
import { migrate } from '../../src/core/store/postgres/migrate.ts';
import { MIGRATIONS } from '../../src/core/store/postgres/migrations.ts';
import type { Store } from '../../src/core/store/store.ts';
import { VERSION } from '../../src/version.ts';
import { tempDataDir } from './data-dir.ts';
import { startPostgres, type TestPostgres } from './postgres.ts';

/** A fresh database of the test cluster, or the test skipped when PostgreSQL is not installed (a failure in CI: see postgres.ts). */
export async function postgresOrSkip(t: TestContext): Promise<TestPostgres | undefined> {
  const pg = await startPostgres(t);
  if (!pg) t.skip('PostgreSQL is not installed (apt-get install postgresql)');
  return pg;
}

/** The Store of `pg`'s database (already migrated by the caller), ready, closed after the test. */
export async function openPostgres(t: TestContext, pg: TestPostgres): Promise<Store> {
  const store = openStore(pg.url, { dataDir: await tempDataDir(t), config: parseConfig('{}', 'estate.config.json'), env: {} });
  t.after(() => store.close());
  await store.ready();
  return store;
}

/** A connection of its own to `pg`'s database (one at most), ended after the test. */
export function sqlOf(t: TestContext, pg: TestPostgres): postgres.Sql {
  const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
  t.after(() => sql.end());
  return sql;
}

/** A fresh database migrated to this build's schema, a connection to it, and its Store; undefined when the test was skipped. */
export async function migratedPostgres(t: TestContext): Promise<{ pg: TestPostgres; sql: postgres.Sql; store: Store } | undefined> {
  const pg = await postgresOrSkip(t);
  if (!pg) return undefined;
  const sql = sqlOf(t, pg);
  await migrate(sql, 'test', VERSION);
  return { pg, sql, store: await openPostgres(t, pg) };
}

/** The versions of the migrations after `version`, in order: what `estate migrate` applies to a database at it (whatever versions later migrations add). */
export function versionsAfter(version: number): number[] {
  return MIGRATIONS.map((m) => m.version).filter((v) => v > version).sort((a, b) => a - b);
}
