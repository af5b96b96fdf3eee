import { Command } from 'commander';
import { loadConfig, resolveDataDir } from '../../config.ts';
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
}

export function pruneCommand(io: CliIO): Command {
  return new Command('prune')
    .description('Drop the records of the series logs dated before a cutoff (retention); lines that cannot be dated are kept')
    .option('--older-than <duration>', 'drop records whose ts is older than this, like 30d or 12h (default: collect.retention in the config)')
    .option('--log <name>', `prune only this log: ${LOG_NAMES.join(', ')} (repeat for several; default: all four)`, (value: string, list: string[] = []) => [...list, value])
    .option('--dry-run', 'count what would be dropped; change nothing')
    .option('--json', 'print {"older_than", "cutoff", "dry_run", "logs": {NAME: {"file", "dropped", "kept", "undated", "bytes_before", "bytes_after"}}}')
    .option('--data-dir <dir>', DATA_DIR_OPTION_TEXT)
    .option('--config <file>', 'the config file (default: estate.config.json in the data dir)')
    .addHelpText(
      'after',
      '\nEach log is rewritten under its writer lock (<file>.lock), atomically: readers see\n' +
        'the old file or the new one. A log that does not exist has nothing to drop.\n' +
        '\nExamples:\n  $ estate prune --older-than 30d\n  $ estate prune --older-than 12h --log disk --log pulse --dry-run\n',
    )
    .action(async (options: PruneOptions) => {
      const names = [...new Set(options.log ?? LOG_NAMES)];
      const unknown = names.find((n) => !LOG_NAMES.includes(n));
      if (unknown !== undefined) throw new EstateError('usage', `--log: unknown log "${unknown}": use ${LOG_NAMES.join(', ')}`);
      const dataDir = resolveDataDir(options.dataDir, io.env);
      const olderThan = options.olderThan ?? loadConfig(dataDir, options.config, io.env).collect?.retention;
      if (olderThan === undefined) throw new EstateError('usage', 'estate prune needs --older-than DURATION (like 30d), or collect.retention in the config');
      const olderThanMs = parseDuration(olderThan, options.olderThan === undefined ? 'collect.retention' : '--older-than');
      const cutoff = new Date(Date.now() - olderThanMs);
      const [{ pruneLog, isPrunableLog }, { DATA_FILES }] = await Promise.all([import('../../core/retention/prune-log.ts'), import('../../core/data-files.ts')]);
      const logs: Record<string, Record<string, unknown>> = {};
      for (const name of names) {
        if (!isPrunableLog(name)) continue;
        const counts = await pruneLog(dataDir, name, cutoff, { dryRun: options.dryRun === true });
        logs[name] = {
          file: DATA_FILES[name],
          dropped: counts.dropped,
          kept: counts.kept,
          undated: counts.undated,
          bytes_before: counts.bytesBefore,
          bytes_after: counts.bytesAfter,
        };
        if (options.json) continue;
        const verb = options.dryRun ? 'would drop' : 'dropped';
        const undated = counts.undated ? ` (${counts.undated} undated)` : '';
        io.stdout(escapeControls(`${DATA_FILES[name]}: ${verb} ${counts.dropped}, kept ${counts.kept}${undated}, ${counts.bytesBefore} → ${counts.bytesAfter} bytes`) + '\n');
      }
      if (options.json) {
        io.stdout(`${JSON.stringify({ older_than: olderThan, cutoff: cutoff.toISOString(), dry_run: options.dryRun === true, logs }, null, 2)}\n`);
      }
    });
}
