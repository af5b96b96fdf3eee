import { Command } from 'commander';
import { loadConfig, resolveDataDir, resolveStoreSpec } from '../../config.ts';
import { parseDuration } from '../../core/duration.ts';
import { EstateError } from '../../errors.ts';
import { DATA_DIR_OPTION_TEXT } from '../common-options.ts';
import type { CliIO } from '../io.ts';
import { escapeControls } from '../safe-text.ts';

// Kept in step with PRUNABLE_LOGS (core/retention/prune-log.ts), which is loaded only when the command runs.
const LOG_NAMES = ['trends', 'disk', 'pulse', 'builds'];

interface PruneOptions {
  olderThan?: string;
  log?: string[];
  json?: boolean;
  dryRun?: boolean;
  dataDir?: string;
  config?: string;
  store?: string;
}

export function pruneCommand(io: CliIO): Command {
  return new Command('prune')
    .description('Drop the records of the series logs dated before a cutoff (retention); lines that cannot be dated are kept')
    .option('--older-than <duration>', 'drop records whose ts is older than this, like 30d or 12h (default: collect.retention in the config)')
    .option('--log <name>', `prune only this log: ${LOG_NAMES.join(', ')} (repeat for several; default: all four)`, (value: string, list: string[] = []) => [...list, value])
    .option('--dry-run', 'count what would be dropped; change nothing')
    .option(
      '--json',
      'print {"older_than", "cutoff", "dry_run", "logs": {NAME: {"file", "dropped", "kept", "undated", "bytes_before", "bytes_after"}}} (a series in PostgreSQL: {"store", "dropped"})',
    )
    .option('--data-dir <dir>', DATA_DIR_OPTION_TEXT)
    .option('--config <file>', 'the config file (default: estate.config.json in the data dir)')
    .option('--store <url>', 'where the series are kept: a postgres:// URL, or data-dir (default: $ESTATE_STORE, else the config\'s store, else the data dir)')
    .addHelpText(
      'after',
      '\nEach log is rewritten atomically (readers see the old file or the new one), its\n' +
        'copy made before its writer lock (<file>.lock) is taken for the rename, so writers\n' +
        'wait milliseconds, not for the copy. A log that does not exist has nothing to drop.\n' +
        'With a PostgreSQL store, trends, disk and pulse are its tables: their rows dated\n' +
        'before the cutoff are deleted (a ts that is not an RFC 3339 date-time is kept);\n' +
        'builds stays a file of the data dir.\n' +
        '\nExamples:\n  $ estate prune --older-than 30d\n  $ estate prune --older-than 12h --log disk --log pulse --dry-run\n' +
        '  $ estate prune --older-than 90d --store postgres://estate@db:5432/estate\n',
    )
    .action(async (options: PruneOptions) => {
      const names = [...new Set(options.log ?? LOG_NAMES)];
      const unknown = names.find((n) => !LOG_NAMES.includes(n));
      if (unknown !== undefined) throw new EstateError('usage', `--log: unknown log "${unknown}": use ${LOG_NAMES.join(', ')}`);
      const dataDir = resolveDataDir(options.dataDir, io.env);
      const config = loadConfig(dataDir, options.config, io.env);
      const olderThan = options.olderThan ?? config.collect?.retention;
      if (olderThan === undefined) throw new EstateError('usage', 'estate prune needs --older-than DURATION (like 30d), or collect.retention in the config');
      const olderThanMs = parseDuration(olderThan, options.olderThan === undefined ? 'collect.retention' : '--older-than');
      const cutoff = new Date(Date.now() - olderThanMs);
      const [{ pruneLog, isPrunableLog }, { DATA_FILES }, { openStore }] = await Promise.all([
        import('../../core/retention/prune-log.ts'),
        import('../../core/data-files.ts'),
        import('../../core/store/open-store.ts'),
      ]);
      const dryRun = options.dryRun === true;
      const verb = dryRun ? 'would drop' : 'dropped';
      const logs: Record<string, Record<string, unknown>> = {};
      // trends, disk and pulse through the store (the data dir's files, or PostgreSQL's tables); builds is always a file of the data dir.
      const store = names.some((n) => n !== 'builds') ? openStore(resolveStoreSpec(options.store, config, io.env), { dataDir, config, env: io.env }) : undefined;
      try {
        await store?.ready();
        for (const name of names) {
          if (!isPrunableLog(name)) continue;
          const pruned = name === 'builds' || !store ? { removed: undefined, file: await pruneLog(dataDir, name, cutoff, { dryRun }) } : await store.series.prune(name, cutoff, { dryRun });
          const counts = pruned.file;
          if (counts === undefined) {
            // A series in PostgreSQL: the rows dropped, in the store named without its password.
            logs[name] = { store: store?.describe(), dropped: pruned.removed };
            if (!options.json) io.stdout(escapeControls(`${name} in ${store?.describe()}: ${verb} ${pruned.removed}`) + '\n');
            continue;
          }
          logs[name] = {
            file: DATA_FILES[name],
            dropped: counts.dropped,
            kept: counts.kept,
            undated: counts.undated,
            bytes_before: counts.bytesBefore,
            bytes_after: counts.bytesAfter,
          };
          if (options.json) continue;
          const undated = counts.undated ? ` (${counts.undated} undated)` : '';
          io.stdout(escapeControls(`${DATA_FILES[name]}: ${verb} ${counts.dropped}, kept ${counts.kept}${undated}, ${counts.bytesBefore} → ${counts.bytesAfter} bytes`) + '\n');
        }
      } finally {
        await store?.close();
      }
      if (options.json) {
        io.stdout(`${JSON.stringify({ older_than: olderThan, cutoff: cutoff.toISOString(), dry_run: options.dryRun === true, logs }, null, 2)}\n`);
      }
    });
}
