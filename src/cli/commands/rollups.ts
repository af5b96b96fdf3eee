import { Command } from 'commander';
import { loadConfig, resolveDataDir, resolveStoreSpec } from '../../config.ts';
import { EstateError } from '../../errors.ts';
import { addDataDirOptions } from '../common-options.ts';
import type { CliIO } from '../io.ts';
import { escapeControls } from '../safe-text.ts';

const SERIES = ['trends', 'disk'] as const;

interface RebuildOptions {
  series?: string[];
  json?: boolean;
  dataDir?: string;
  config?: string;
  store?: string;
}

/** `estate rollups rebuild`: the range routes' rollups (DESIGN.md 7b) computed again from the raw series, offline. */
export function rollupsCommand(io: CliIO): Command {
  const rollups = new Command('rollups').description('The 1-minute and 1-hour rollups behind the range routes (trends range, disk range)');
  rollups.addCommand(
    addDataDirOptions(new Command('rebuild').description('Compute the rollups again from the raw series (buckets older than the oldest raw record are kept); estate serve keeps them current by itself'))
      .option('--series <name>', `rebuild only this series: ${SERIES.join(', ')} (repeat for both; default: both)`, (value: string, list: string[] = []) => [...list, value])
      .option('--json', 'print {"series": {NAME: {"records", "periods", "pruned"}}}')
      .addHelpText(
        'after',
        '\nOn the data dir the rollups are files under rollups/ (docs/data-dir.md), rewritten\n' +
          'under their lock while a running server waits; with a PostgreSQL store, the rows\n' +
          'of series_rollups, in one transaction (inserts into the series wait for it).\n' +
          'rollups.retention in the config bounds what they keep (1m: 30d, 1h: 400d by default).\n' +
          '\nExamples:\n  $ estate rollups rebuild\n  $ estate rollups rebuild --series trends --json\n  $ estate rollups rebuild --store postgres://estate@db:5432/estate\n',
      )
      .action(async (options: RebuildOptions) => {
        const names = [...new Set(options.series ?? SERIES)];
        const unknown = names.find((n) => !(SERIES as readonly string[]).includes(n));
        if (unknown !== undefined) throw new EstateError('usage', `--series: unknown series "${unknown}": use ${SERIES.join(', ')}`);
        const dataDir = resolveDataDir(options.dataDir, io.env);
        const config = loadConfig(dataDir, options.config, io.env);
        const { openStore } = await import('../../core/store/open-store.ts');
        const store = openStore(resolveStoreSpec(options.store, config, io.env), { dataDir, config, env: io.env });
        const done: Record<string, unknown> = {};
        try {
          await store.ready();
          for (const name of names as (typeof SERIES)[number][]) {
            const result = await store.series.rebuildRollups(name);
            done[name] = result;
            if (!options.json) io.stdout(escapeControls(`${name} in ${store.describe()}: ${result.records} records rolled up, ${result.periods} period files written, ${result.pruned} past the retention dropped`) + '\n');
          }
        } finally {
          await store.close();
        }
        if (options.json) io.stdout(`${JSON.stringify({ series: done }, null, 2)}\n`);
      }),
  );
  return rollups;
}
