import { Option, type Command } from 'commander';
import { type EstateContext, createContext } from '../api/context.ts';
import { assertDataDir, envSettings, loadConfig, resolveDataDir } from '../config.ts';
import type { CliIO } from './io.ts';

export interface CommonOptions {
  dataDir?: string;
  config?: string;
  json?: boolean;
  url?: string;
  apiKey?: string;
  debug?: boolean;
}

export function addDataDirOptions(cmd: Command): Command {
  return cmd
    .option('--data-dir <dir>', 'estate data directory (default: $ESTATE_DATA_DIR, else $XDG_DATA_HOME/estate)')
    .option('--config <file>', 'config file (default: estate.config.json in the data dir)');
}

/** Options every operation command takes. */
export function addCommonOptions(cmd: Command): Command {
  addDataDirOptions(cmd)
    .option('--json', 'print the JSON body the HTTP API returns')
    .option('--url <url>', 'call this estate server instead of the local data dir (default: $ESTATE_URL)')
    .option('--api-key <key>', 'credential for --url (default: $ESTATE_API_KEY)');
  return cmd.addOption(new Option('--debug', 'print stack traces of errors').hideHelp(false));
}

/** The local data dir and config, checked: a missing data dir is a usage error (exit 2). */
export function localContext(options: CommonOptions, io: CliIO): EstateContext {
  const dataDir = resolveDataDir(options.dataDir, io.env);
  assertDataDir(dataDir);
  return createContext(dataDir, loadConfig(dataDir, options.config));
}

/** `--url`/`ESTATE_URL` with `--api-key`/`ESTATE_API_KEY`, when remote mode is asked for. */
export function remoteTarget(options: CommonOptions, io: CliIO): { url: string; apiKey: string | undefined } | undefined {
  const env = envSettings(io.env);
  const url = options.url ?? env.url;
  return url ? { url, apiKey: options.apiKey ?? env.apiKey } : undefined;
}
