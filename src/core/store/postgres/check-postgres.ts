import { describeStoreUrl } from '../open-store.ts';
import { failureCode, loadDriver, openPool, withinDeadline, type Sql } from './connect.ts';
import { readSchemaVersion } from './migrate.ts';
import { SCHEMA_VERSION } from './migrations.ts';

/** One finding of `estate doctor` about the store (the shape of core/doctor.ts's checks). */
export interface StoreCheck {
  name: string;
  status: 'ok' | 'warn' | 'fail' | 'skip';
  detail: string;
  fix: string | null;
}

/** The tables estate reads and writes, each with the privileges it needs there. */
const TABLES: Readonly<Record<string, readonly string[]>> = {
  completions: ['SELECT', 'INSERT'],
  entries: ['SELECT', 'INSERT'],
  training_runs: ['SELECT', 'INSERT', 'DELETE'],
  api_keys: ['SELECT', 'INSERT', 'UPDATE'],
  token_secret: ['SELECT', 'INSERT'],
  schema_version: ['SELECT'],
  // Kept by the trigger of each INSERT into completions and entries, as the role that inserts (migrations.ts, version 2).
  tally_groups: ['SELECT', 'INSERT', 'UPDATE'],
  tally_distinct: ['SELECT', 'INSERT'],
  tally_buckets: ['SELECT', 'INSERT', 'UPDATE'],
  // The series (version 3); series_nodes is kept by the trigger of each insert into them, as the role that inserts,
  // and by retention (Series.prune: DELETE, and a lock of series_nodes, which DELETE allows).
  series_trends: ['SELECT', 'INSERT', 'DELETE'],
  series_disk: ['SELECT', 'INSERT', 'DELETE'],
  series_pulse: ['SELECT', 'INSERT', 'DELETE'],
  series_nodes: ['SELECT', 'INSERT', 'DELETE'],
  series_heartbeat: ['SELECT', 'INSERT', 'UPDATE'],
  // The rollups of the range routes (version 5): kept by the trigger of each insert into trends and disk, as the role
  // that inserts; their retention deletes.
  series_rollups: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  // The provider probes (version 7): written by estate serve, read by /events, the older than 30 days deleted by estate serve.
  provider_probes: ['SELECT', 'INSERT', 'DELETE'],
  // The starts of runs (version 6): a keyed record log, written once per key.
  work_starts: ['SELECT', 'INSERT'],
  // The webhook outbox (version 8): deliveries enqueued, claimed and finished (UPDATE), the finished ones pruned.
  notify_targets: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  notify_deliveries: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  // The watched events (version 9): a keyed record log, each event stored once by whichever replica noticed it first; those older than events.retention deleted by estate serve.
  watched_events: ['SELECT', 'INSERT', 'DELETE'],
};

/** The serial columns whose sequences estate's inserts draw from. */
const SERIALS: readonly (readonly [string, string])[] = [
  ['completions', 'event_id'],
  ['entries', 'event_id'],
  ['api_keys', 'seq'],
  ['series_trends', 'seq'],
  ['series_disk', 'seq'],
  ['series_pulse', 'seq'],
  ['provider_probes', 'seq'],
  ['work_starts', 'event_id'],
  ['notify_deliveries', 'seq'],
  ['watched_events', 'event_id'],
];

/**
 * `estate doctor` on a PostgreSQL store: the connection (server version and
 * round trip), the schema version against the one this build needs, and the
 * privileges of the connecting role on every table and sequence estate uses.
 * Never throws; names the store without its password.
 */
export async function checkPostgresStore(url: string, env: NodeJS.ProcessEnv): Promise<StoreCheck[]> {
  const store = describeStoreUrl(url);
  let sql: Sql;
  try {
    sql = openPool(await loadDriver(), url, env, { max: 1 });
  } catch (err) {
    return [{ name: 'store', status: 'fail', detail: `${store}: ${failureCode(err)}`, fix: 'check the --store URL (or $ESTATE_STORE, or store in the config)' }];
  }
  const bounded = <T>(query: () => PromiseLike<T>): Promise<T> => withinDeadline(store, async () => query());
  const checks: StoreCheck[] = [];
  try {
    const started = performance.now();
    let version: string;
    try {
      const [row] = await bounded(() => sql`SELECT current_setting('server_version') AS version, current_user AS role`);
      version = `PostgreSQL ${String(row?.version)} as ${String(row?.role)}`;
    } catch (err) {
      const what = failureCode(err);
      const fix =
        what === 'authentication failed'
          ? 'give the password in the URL, $PGPASSWORD or a PGPASSFILE (never in the config file)'
          : what === 'database does not exist'
            ? `create it: createdb ${databaseOf(url)}`
            : 'check that PostgreSQL runs and is reachable from this machine, and the --store URL';
      return [{ name: 'store', status: 'fail', detail: `${store}: ${what}`, fix }];
    }
    checks.push({ name: 'store', status: 'ok', detail: `${store}: ${version}, answered in ${Math.round(performance.now() - started)} ms`, fix: null });
    const found = await bounded(() => readSchemaVersion(sql));
    if (found !== SCHEMA_VERSION) {
      const newer = found > SCHEMA_VERSION;
      checks.push({
        name: 'store schema',
        status: 'fail',
        detail: `version ${found}; this estate needs version ${SCHEMA_VERSION}`,
        fix: newer ? `upgrade estate: the database was migrated by a newer release` : `run: estate migrate --store ${store}`,
      });
      return checks;
    }
    checks.push({ name: 'store schema', status: 'ok', detail: `version ${found}, as this estate needs`, fix: null });
    const missing: string[] = [];
    for (const [table, privileges] of Object.entries(TABLES)) {
      for (const privilege of privileges) {
        const [row] = await bounded(() => sql`SELECT has_table_privilege(${table}, ${privilege}) AS ok`);
        if (!row?.ok) missing.push(`${privilege} on ${table}`);
      }
    }
    for (const [table, column] of SERIALS) {
      const [row] = await bounded(() => sql`SELECT pg_get_serial_sequence(${table}, ${column}) AS name`);
      const sequence = row?.name as string | null | undefined;
      if (!sequence) continue;
      const [usage] = await bounded(() => sql`SELECT has_sequence_privilege(${sequence}, 'USAGE') AS ok`);
      if (!usage?.ok) missing.push(`USAGE on sequence ${sequence.replace(/^public\./, '')}`);
    }
    checks.push(
      missing.length === 0
        ? { name: 'store privileges', status: 'ok', detail: `the role may read and write every table estate uses`, fix: null }
        : { name: 'store privileges', status: 'fail', detail: `missing: ${missing.join(', ')}`, fix: `as the database owner, GRANT them to the role estate connects as` },
    );
    return checks;
  } catch (err) {
    // What was found before the failure stays in the report.
    return [...checks, { name: checks.length ? 'store checks' : 'store', status: 'fail', detail: `${store}: ${failureCode(err)}`, fix: 'check that PostgreSQL runs and is reachable from this machine' }];
  } finally {
    await sql.end({ timeout: 2 }).catch(() => {});
  }
}

function databaseOf(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname.slice(1)) || 'estate';
  } catch {
    return 'estate';
  }
}
