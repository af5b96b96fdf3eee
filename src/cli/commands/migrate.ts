import { Command } from 'commander';
import { loadConfig, resolveDataDir, resolveStoreSpec } from '../../config.ts';
import { isPostgresSpec } from '../../core/store/open-store.ts';
import { EstateError } from '../../errors.ts';
import { VERSION } from '../../version.ts';
import { addDataDirOptions } from '../common-options.ts';
import type { CliIO } from '../io.ts';

interface MigrateOptions {
  store?: string;
  dataDir?: string;
  config?: string;
  json?: boolean;
}

export function migrateCommand(io: CliIO): Command {
  // The password comes from PGPASSWORD or a PGPASSFILE, as for every command using the store.
  return addDataDirOptions(
    new Command('migrate').description("Apply the PostgreSQL store's pending schema migrations (safe to run again, and from several hosts at once)"),
  )
    .option('--json', 'print {"store","from","to","applied"}')
    .addHelpText('after', '\nExamples:\n  $ PGPASSWORD=… estate migrate --store postgres://estate@db.internal/estate\n  $ ESTATE_STORE=postgres://estate@db.internal/estate estate migrate --json\n')
    .action(async (options: MigrateOptions) => {
      const config = loadConfig(resolveDataDir(options.dataDir, io.env), options.config, io.env);
      const spec = resolveStoreSpec(options.store, config, io.env);
      if (spec === undefined || !isPostgresSpec(spec)) {
        throw new EstateError('usage', 'estate migrate needs a PostgreSQL store: pass --store postgres://… or set ESTATE_STORE (the data dir needs no migration)');
      }
      const { migrateStore } = await import('../../core/store/postgres/migrate.ts');
      const result = await migrateStore(spec, io.env, VERSION);
      if (options.json) {
        io.stdout(`${JSON.stringify(result, null, 2)}\n`);
        return;
      }
      if (result.applied.length === 0) io.stdout(`${result.store} is at schema version ${result.to}: nothing to apply\n`);
      else {
        for (const m of result.applied) io.stdout(`applied ${m.version}: ${m.description}\n`);
        io.stdout(`${result.store} migrated from schema version ${result.from} to ${result.to}\n`);
      }
    });
}
