import type { TestContext } from 'node:test';
import { parseConfig } from '../../src/config.ts';
import { openStore } from '../../src/core/store/open-store.ts';
import type { Store } from '../../src/core/store/store.ts';
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
