import { existsSync } from 'node:fs';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { parseConfig } from '../../src/config.ts';
import { createDataDirStore } from '../../src/core/store/data-dir-store.ts';
import { openStore } from '../../src/core/store/open-store.ts';
import type { Store } from '../../src/core/store/store.ts';
import { VERSION } from '../../src/version.ts';
import { tempDataDir } from './data-dir.ts';

// The stores the behavioural suite (test/store-contract.test.ts) runs
// against: the data dir's always, PostgreSQL's when test/helpers/postgres.ts
// exists and finds a PostgreSQL server (else that store's tests skip, saying so).

/** One estate's store, as two processes (or replicas) would each open it. */
export interface OpenedStore {
  store: Store;
  /** Another Store over the same data (another writer); closed after the test. */
  another: () => Promise<Store>;
  dataDir: string;
}

export interface StoreUnderTest {
  name: string;
  /** A fresh, empty store closed after the test; undefined when this kind cannot run here (skip). */
  open: (t: Pick<TestContext, 'after'>) => Promise<OpenedStore | undefined>;
}

const config = parseConfig('{}', 'estate.config.json');

export function storesUnderTest(): StoreUnderTest[] {
  const stores: StoreUnderTest[] = [
    {
      name: 'data dir',
      open: async (t) => {
        const dataDir = await tempDataDir(t);
        const opened = (): Store => {
          const store = createDataDirStore(dataDir, config);
          t.after(() => store.close());
          return store;
        };
        return { store: opened(), another: async () => opened(), dataDir };
      },
    },
  ];
  if (existsSync(path.join(import.meta.dirname, 'postgres.ts')) && existsSync(path.join(import.meta.dirname, '..', '..', 'src', 'core', 'store', 'postgres', 'migrate.ts'))) {
    stores.push({
      name: 'postgres',
      open: async (t) => {
        const { startPostgres } = (await import('./postgres.ts')) as {
          startPostgres: (t: Pick<TestContext, 'after'>) => Promise<{ url: string; stop: () => Promise<void> } | undefined>;
        };
        const pg = await startPostgres(t);
        if (!pg) return undefined;
        const dataDir = await tempDataDir(t);
        const options = { dataDir, config, env: {} };
        // The schema, as `estate migrate` applies it.
        const { migrateStore } = await import('../../src/core/store/postgres/migrate.ts');
        await migrateStore(pg.url, {}, VERSION);
        const opened = async (): Promise<Store> => {
          const store = openStore(pg.url, options);
          t.after(() => store.close());
          await store.ready();
          return store;
        };
        return { store: await opened(), another: opened, dataDir };
      },
    });
  }
  return stores;
}
