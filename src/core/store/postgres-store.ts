import { ENTRIES } from '../publishing.ts';
import { COMPLETIONS } from '../work.ts';
import { STARTS } from '../runs/run-starts.ts';
import { EVENTS } from '../events/stored-events.ts';
import { describeStoreUrl } from './open-store.ts';
import { failureCode, loadDriver, openPool, withinDeadline } from './postgres/connect.ts';
import { checkSchemaVersion, readSchemaVersion } from './postgres/migrate.ts';
import { SCHEMA_VERSION } from './postgres/migrations.ts';
import { Notifications } from './postgres/notifications.ts';
import { postgresCredentials, postgresTokenSecret } from './postgres/postgres-credentials.ts';
import { PostgresRecords } from './postgres/postgres-records.ts';
import { postgresProbes } from './postgres/postgres-probes.ts';
import { postgresSeries } from './postgres/postgres-series.ts';
import { postgresOutbox } from './postgres/postgres-outbox.ts';
import { postgresTraining } from './postgres/postgres-training.ts';
import { rollupRetentionOf } from '../rollups/rollup-retention-of.ts';
import type { OpenPostgresStore, Store } from './store.ts';

// The PostgreSQL store: what estate writes, in one database that any number
// of `estate serve` replicas and CLI writers share (schema: postgres/migrations.ts,
// applied by `estate migrate`). Loaded only for a postgres:// store.

/** How long /readyz waits for the store's answer. */
const HEALTH_MS = 3000;

/**
 * Opens a pool to `url` (connecting at the first query). `ready()` checks the
 * server and the schema version; a server that is down makes every call an
 * `unavailable` error (503, Retry-After) naming the store, within bounded time.
 */
export const openPostgresStore: OpenPostgresStore = async (url, options) => {
  const driver = await loadDriver();
  const name = describeStoreUrl(url);
  const sql = openPool(driver, url, options.env);
  let notifications: Notifications | undefined;
  const listener = (): Notifications => {
    if (!notifications) {
      let target: Notifications | undefined;
      const pool = openPool(driver, url, options.env, {
        max: 1,
        onNotify: (channel) => target?.onNotify(channel),
        onClose: () => target?.onClose(),
      });
      notifications = target = new Notifications(pool);
    }
    return notifications;
  };
  const completions = new PostgresRecords(sql, COMPLETIONS, { name: 'completions', lockId: 1 }, name, listener);
  const entries = new PostgresRecords(sql, ENTRIES, { name: 'entries', lockId: 2 }, name, listener);
  const starts = new PostgresRecords(sql, STARTS, { name: 'work_starts', lockId: 3 }, name, listener);
  const events = Object.assign(new PostgresRecords(sql, EVENTS, { name: 'watched_events', lockId: 4 }, name, listener), {
    prune: (before: Date) => events.pruneBefore('ts', before),
  });
  const credentials = postgresCredentials(sql, name);
  const store: Store = {
    kind: 'postgres',
    describe: () => name,
    completions,
    starts,
    events,
    entries,
    training: postgresTraining(sql, name),
    credentials,
    tokenSecret: postgresTokenSecret(sql, name),
    series: postgresSeries(sql, name, rollupRetentionOf(options.config)),
    probes: postgresProbes(sql, name),
    outbox: postgresOutbox(sql, name),
    ready: () => withinDeadline(name, async () => checkSchemaVersion(await readSchemaVersion(sql), name)),
    health: async () => {
      let state: string;
      try {
        const found = await withinDeadline(name, () => readSchemaVersion(sql), HEALTH_MS);
        state = found === SCHEMA_VERSION ? 'ok' : `schema version ${found}, needs ${SCHEMA_VERSION}`;
      } catch (err) {
        state = failureCode(err);
      }
      return { store: state, credential_store: state === 'ok' ? await credentials.health() : 'skipped' };
    },
    close: async () => {
      await Promise.all([completions.close(), starts.close(), events.close(), entries.close()]);
      await notifications?.close();
      await sql.end({ timeout: 5 });
    },
  };
  return store;
};
